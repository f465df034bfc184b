// 编辑: name, dimension, model scope, expiry and rate limit. Only changed fields are
// sent, so an untouched past expiry of an expired key is not re-validated.
import { useState } from 'react';
import { UpdateApiKeyDocument, type KeyRowFragment, type UpdateApiKeyInput } from '../gql/graphql';
import type { GraphqlRequest } from '../lib/graphql-client';
import { useI18n } from '../lib/i18n';
import { KeyFormDialog, type KeyFormValues, type ModelOption } from './key-form';
import { rateLimitInput, rateLimitTexts, sameRateLimit } from './rate-limit';

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
  const rateLimit = rateLimitInput(after.rateLimit);
  if (!sameRateLimit(rateLimit, before.rateLimit)) input.rateLimit = rateLimit;
  return input;
}

export function EditKeyDialog({ request, apiKey, models, onSaved, onClose }: EditKeyDialogProps) {
  const { t } = useI18n();
  const [values, setValues] = useState<KeyFormValues>({
    name: apiKey.name,
    dimension: apiKey.dimension,
    modelScope: [...apiKey.modelScope],
    expiresAt: apiKey.expiresAt,
    rateLimit: rateLimitTexts(apiKey.rateLimit),
  });
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);
  // A scope may name a model the catalog no longer lists; keep it visible.
  const options = [...models, ...apiKey.modelScope.filter((name) => !models.some((m) => m.name === name)).map((name) => ({ name, displayName: name }))];

  const save = async () => {
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

  return (
    <KeyFormDialog
      title={t('edit.title', { name: apiKey.name })}
      formId="edit-key-form"
      submitLabel={t('form.save')}
      values={values}
      onChange={setValues}
      models={options}
      error={error}
      saving={saving}
      onSubmit={save}
      onClose={onClose}
    />
  );
}
