// 创建密钥: the form, then the new secret exactly once. The secret lives only
// in this component's state; closing the dialog unmounts it, so it leaves the
// DOM and nothing else holds a reference.
import { useRef, useState, type ReactNode } from 'react';
import { Dialog } from '../components/dialog';
import { CreateApiKeyDocument } from '../gql/graphql';
import type { GraphqlRequest } from '../lib/graphql-client';
import { DIMENSIONS, localToday } from '../lib/format';
import { useI18n } from '../lib/i18n';
import { KeyFormDialog, type KeyFormValues, type ModelOption } from './key-form';
import { NO_LIMIT_TEXTS, rateLimitInput } from './rate-limit';

interface CreateKeyDialogProps {
  request: GraphqlRequest;
  models: readonly ModelOption[];
  /** The key was created (called before the secret is shown). */
  onCreated(): void;
  onClose(): void;
}

type CopyState = 'idle' | 'copied' | 'selected';

export function CreateKeyDialog({ request, models, onCreated, onClose }: CreateKeyDialogProps) {
  const { t } = useI18n();
  const [values, setValues] = useState<KeyFormValues>({
    name: '',
    dimension: DIMENSIONS[0],
    modelScope: models.length === 1 ? [models[0]!.name] : [],
    expiresAt: null,
    rateLimit: NO_LIMIT_TEXTS,
  });
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);

  const save = async () => {
    setSaving(true);
    setError(null);
    const limit = rateLimitInput(values.rateLimit);
    try {
      const result = await request(CreateApiKeyDocument, {
        input: {
          name: values.name.trim(),
          dimension: values.dimension,
          modelScope: values.modelScope,
          expiresAt: values.expiresAt,
          // All empty: leave it out, so the account's default limit (if any) applies.
          ...(limit ? { rateLimit: limit } : {}),
        },
      });
      setSecret(result.createApiKey.secret);
      onCreated();
    } catch (failure) {
      setError(failure);
    } finally {
      setSaving(false);
    }
  };

  const close = () => {
    setSecret(null);
    onClose();
  };

  if (secret !== null) return <SecretView secret={secret} onClose={close} />;

  return (
    <KeyFormDialog
      title={t('create.title')}
      formId="create-key-form"
      submitLabel={t('create.submit')}
      values={values}
      onChange={setValues}
      models={models}
      minDate={localToday()}
      error={error}
      saving={saving}
      onSubmit={save}
      onClose={close}
    />
  );
}

/** The new secret, once, with a copy button; `title` and `children` let rotation add what happened to the old key. */
export function SecretView({ secret, onClose, title, children }: { secret: string; onClose(): void; title?: string; children?: ReactNode }) {
  const { t } = useI18n();
  const [copy, setCopy] = useState<CopyState>('idle');
  const textRef = useRef<HTMLElement>(null);

  const selectText = () => {
    const node = textRef.current;
    const selection = window.getSelection();
    if (!node || !selection) return;
    const range = document.createRange();
    range.selectNodeContents(node);
    selection.removeAllRanges();
    selection.addRange(range);
  };

  const copySecret = async () => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(secret);
      setCopy('copied');
    } catch {
      // No clipboard (insecure context, denied permission): select the text instead.
      selectText();
      setCopy('selected');
    }
  };

  const close = () => {
    window.getSelection()?.removeAllRanges();
    onClose();
  };

  return (
    <Dialog
      title={title ?? t('create.secretTitle')}
      onClose={close}
      footer={
        <button type="button" className="button button-primary" onClick={close}>
          {t('create.done')}
        </button>
      }
    >
      <div className="alert alert-warning" role="note">
        {t('create.secretWarning')}
      </div>
      {children}
      <div className="field">
        <span className="field-label" id="new-secret-label">
          {t('create.secretLabel')}
        </span>
        <div className="secret-row">
          <code ref={textRef} className="secret" aria-labelledby="new-secret-label" data-testid="new-secret" tabIndex={0} onFocus={selectText}>
            {secret}
          </code>
          <button type="button" className="button" onClick={() => void copySecret()} autoFocus>
            {t('create.copy')}
          </button>
        </div>
        <p className="hint" role="status" aria-live="polite">
          {copy === 'copied' ? t('create.copied') : copy === 'selected' ? t('create.copySelected') : ''}
        </p>
      </div>
    </Dialog>
  );
}
