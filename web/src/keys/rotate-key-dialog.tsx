// 轮换: the grace period, then the successor's secret exactly once, with what
// happens to the old key and when it was last used, so a team can confirm no
// residual calls before the grace ends.
import { useId, useState, type FormEvent } from 'react';
import { Dialog } from '../components/dialog';
import { ErrorBanner } from '../components/error-banner';
import { RotateApiKeyDocument, type KeyRowFragment } from '../gql/graphql';
import type { GraphqlRequest } from '../lib/graphql-client';
import { localDateTime } from '../lib/format';
import { useI18n } from '../lib/i18n';
import { SecretView } from './create-key-dialog';

interface RotateKeyDialogProps {
  request: GraphqlRequest;
  apiKey: KeyRowFragment;
  /** The rotation committed (called before the secret is shown). */
  onRotated(): void;
  onClose(): void;
}

const DEFAULT_GRACE_HOURS = 24;
const MAX_GRACE_HOURS = 720;

export function RotateKeyDialog({ request, apiKey, onRotated, onClose }: RotateKeyDialogProps) {
  const { t } = useI18n();
  const id = useId();
  const [graceHours, setGraceHours] = useState(String(DEFAULT_GRACE_HOURS));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ secret: string; previous: KeyRowFragment } | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await request(RotateApiKeyDocument, { id: apiKey.id, input: { graceHours: Number(graceHours) } });
      setResult({ secret: answer.rotateApiKey.secret, previous: answer.rotateApiKey.previous });
      onRotated();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  if (result !== null) {
    const { previous } = result;
    return (
      <SecretView secret={result.secret} title={t('rotate.secretTitle')} onClose={onClose}>
        <p data-testid="rotation-old-key">
          {previous.cancelsAt ? t('rotate.oldUntil', { at: localDateTime(previous.cancelsAt) }) : t('rotate.oldSuspended')}{' '}
          {previous.lastUsedAt ? t('rotate.oldLastUsed', { at: previous.lastUsedAt }) : t('rotate.oldNeverUsed')}
        </p>
      </SecretView>
    );
  }

  const emergency = graceHours.trim() === '0';
  return (
    <Dialog
      title={t('rotate.title', { name: apiKey.name })}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t('form.cancel')}
          </button>
          <button type="submit" form={`${id}-form`} className={emergency ? 'button button-danger' : 'button button-primary'} disabled={busy}>
            {t('rotate.submit')}
          </button>
        </>
      }
    >
      <ErrorBanner error={error} />
      <form id={`${id}-form`} className="form-grid" onSubmit={(event) => void submit(event)}>
        <p>{t('rotate.body')}</p>
        <div className="field">
          <label htmlFor={`${id}-grace`}>{t('rotate.graceHours')}</label>
          <input
            id={`${id}-grace`}
            name="grace_hours"
            type="number"
            min={0}
            max={MAX_GRACE_HOURS}
            step={1}
            required
            autoFocus
            value={graceHours}
            aria-describedby={`${id}-grace-hint`}
            onChange={(event) => setGraceHours(event.target.value)}
          />
          <small id={`${id}-grace-hint`} className="hint">
            {t('rotate.graceHint')}
          </small>
        </div>
        {emergency ? (
          <div className="alert alert-warning" role="note">
            {t('rotate.emergencyNote')}
          </div>
        ) : null}
      </form>
    </Dialog>
  );
}
