// 编辑: name, dimension, model scope and expiry. Only changed fields are
// sent, so an untouched past expiry of an expired key is not re-validated.
import { useState, type FormEvent } from 'react';
import { Dialog } from '../components/dialog';
import { ErrorBanner } from '../components/error-banner';
import { UpdateApiKeyDocument, type KeyRowFragment, type UpdateApiKeyInput } from '../gql/graphql';
import { ApiError, type GraphqlRequest } from '../lib/graphql-client';
import { useI18n } from '../lib/i18n';
import { KeyFormFields, type KeyFormValues, type ModelOption } from './key-form';

interface EditKeyDialogProps {
  request: GraphqlRequest;
  apiKey: KeyRowFragment;
  models: readonly ModelOption[];
  onSaved(): void;
  onClose(): void;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((item) => b.includes(item));

export function changedFields(before: KeyRowFragment, after: KeyFormValues): UpdateApiKeyInput {
  const input: UpdateApiKeyInput = {};
  if (after.name.trim() !== before.name) input.name = after.name.trim();
  if (after.dimension !== before.dimension) input.dimension = after.dimension;
  if (!sameSet(after.modelScope, before.modelScope)) input.modelScope = after.modelScope;
  if (after.expiresAt !== before.expiresAt) input.expiresAt = after.expiresAt;
  return input;
}

export function EditKeyDialog({ request, apiKey, models, onSaved, onClose }: EditKeyDialogProps) {
  const { t } = useI18n();
  const [values, setValues] = useState<KeyFormValues>({
    name: apiKey.name,
    dimension: apiKey.dimension,
    modelScope: [...apiKey.modelScope],
    expiresAt: apiKey.expiresAt,
  });
  const [scopeError, setScopeError] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  // A scope may name a model the catalog no longer lists; keep it visible.
  const options = [...models, ...apiKey.modelScope.filter((name) => !models.some((m) => m.name === name)).map((name) => ({ name, displayName: name }))];

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (values.modelScope.length === 0) {
      setScopeError(true);
      return;
    }
    setScopeError(false);
    const input = changedFields(apiKey, values);
    if (Object.keys(input).length === 0) {
      onClose();
      return;
    }
    setSaving(true);
    setError(null);
    try {
      await request(UpdateApiKeyDocument, { id: apiKey.id, input });
      onSaved();
    } catch (failure) {
      setError(failure);
      setSaving(false);
    }
  };

  const formId = 'edit-key-form';
  return (
    <Dialog
      title={t('edit.title', { name: apiKey.name })}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t('form.cancel')}
          </button>
          <button type="submit" form={formId} className="button button-primary" disabled={saving}>
            {saving ? t('form.saving') : t('form.save')}
          </button>
        </>
      }
    >
      <form id={formId} onSubmit={(event) => void submit(event)}>
        <ErrorBanner error={error} />
        <KeyFormFields
          values={values}
          onChange={setValues}
          models={options}
          scopeError={scopeError}
          invalidField={error instanceof ApiError ? error.field : undefined}
        />
      </form>
    </Dialog>
  );
}
