import { useI18n } from '../lib/i18n';

/** One button that flips between 中文 and English. */
export function LanguageSwitch() {
  const { t, locale, setLocale } = useI18n();
  const next = locale === 'en' ? 'zh-CN' : 'en';
  return (
    <button type="button" className="button button-ghost" lang={next} aria-label={t('app.switchLanguageLabel')} onClick={() => setLocale(next)}>
      {t('app.switchLanguage')}
    </button>
  );
}
