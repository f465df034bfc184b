// Chinese by default, English on request; the choice is remembered in
// localStorage and mirrored to <html lang>.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { en, zh, type MessageKey, type Messages } from './messages';

export type Locale = 'zh-CN' | 'en';

const MESSAGES: Record<Locale, Messages> = { 'zh-CN': zh, en };
const STORAGE_KEY = 'tsxt.console.locale';

export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

interface I18n {
  locale: Locale;
  t: Translate;
  setLocale(locale: Locale): void;
  /** Whole numbers with grouping in the current locale. */
  formatInt(value: number): string;
}

const I18nContext = createContext<I18n | null>(null);

function initialLocale(): Locale {
  try {
    return localStorage.getItem(STORAGE_KEY) === 'en' ? 'en' : 'zh-CN';
  } catch {
    return 'zh-CN';
  }
}

export function interpolate(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

export function I18nProvider({ children }: { children: ReactNode }) {
  const [locale, setLocaleState] = useState<Locale>(initialLocale);
  useEffect(() => {
    document.documentElement.lang = locale;
    document.title = MESSAGES[locale]['app.name'];
  }, [locale]);
  const setLocale = useCallback((next: Locale) => {
    setLocaleState(next);
    try {
      localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // Storage may be disabled; the choice then lasts for this page only.
    }
  }, []);
  const value = useMemo<I18n>(() => {
    const numbers = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
    return {
      locale,
      setLocale,
      t: (key, params) => interpolate(MESSAGES[locale][key], params),
      formatInt: (n) => numbers.format(n),
    };
  }, [locale, setLocale]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useI18n outside I18nProvider');
  return value;
}
