import { ApiError } from './graphql-client';
import type { Translate } from './i18n';
import { zh, type MessageKey } from './messages';

export interface ErrorText {
  text: string;
  /** The server's `extensions.code`, shown small for support. */
  code: string;
}

const isMessageKey = (key: string): key is MessageKey => key in zh;

/** A readable sentence for an error, in the current language. */
export function describeError(t: Translate, error: unknown): ErrorText {
  if (error instanceof ApiError) {
    const key = `error.${error.code}`;
    const text = isMessageKey(key) ? t(key, { message: error.message }) : t('error.unknown', { message: error.message });
    return { text, code: error.code };
  }
  return { text: t('error.internal_error'), code: 'client_error' };
}
