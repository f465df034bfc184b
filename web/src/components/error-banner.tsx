import { describeError } from '../lib/errors';
import { useI18n } from '../lib/i18n';

/** A server or network error as a readable sentence, with its code. */
export function ErrorBanner({ error, onDismiss }: { error: unknown; onDismiss?: () => void }) {
  const { t } = useI18n();
  if (error === null || error === undefined) return null;
  const { text, code } = describeError(t, error);
  return (
    <div className="alert alert-error" role="alert">
      <span className="alert-text">{text}</span>
      <code className="alert-code">{code}</code>
      {onDismiss ? (
        <button type="button" className="link-button" onClick={onDismiss}>
          {t('error.dismiss')}
        </button>
      ) : null}
    </div>
  );
}
