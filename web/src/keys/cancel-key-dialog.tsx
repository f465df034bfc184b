// 注销 cannot be undone, so it asks first; the safe choice has the focus.
import { useState } from 'react';
import { Dialog } from '../components/dialog';
import { ErrorBanner } from '../components/error-banner';
import { CancelApiKeyDocument, type KeyRowFragment } from '../gql/graphql';
import type { GraphqlRequest } from '../lib/graphql-client';
import { useI18n } from '../lib/i18n';

interface CancelKeyDialogProps {
  request: GraphqlRequest;
  apiKey: KeyRowFragment;
  onCancelled(): void;
  onClose(): void;
}

export function CancelKeyDialog({ request, apiKey, onCancelled, onClose }: CancelKeyDialogProps) {
  const { t } = useI18n();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await request(CancelApiKeyDocument, { id: apiKey.id });
      onCancelled();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  return (
    <Dialog
      role="alertdialog"
      title={t('confirm.cancelTitle')}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button" onClick={onClose} autoFocus>
            {t('confirm.back')}
          </button>
          <button type="button" className="button button-danger" disabled={busy} onClick={() => void confirm()}>
            {t('confirm.cancelConfirm')}
          </button>
        </>
      }
    >
      <ErrorBanner error={error} />
      <p>{t('confirm.cancelBody', { name: apiKey.name })}</p>
    </Dialog>
  );
}
