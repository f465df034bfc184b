// The form a key is made of, shared by the create and edit dialogs: its
// fields, and the dialog around them that checks the model scope before it
// lets a save through.
import { useId, useState, type FormEvent } from 'react';
import { Dialog } from '../components/dialog';
import { ErrorBanner } from '../components/error-banner';
import { DIMENSIONS, localToday } from '../lib/format';
import { ApiError } from '../lib/graphql-client';
import { useI18n } from '../lib/i18n';
import type { MessageKey } from '../lib/messages';
import { BUDGET_FIELDS, BUDGETS, type Budget, type RateLimitTexts } from './rate-limit';

/** Unticking 永不过期 proposes this many days from today. */
const SUGGESTED_DAYS = 90;

export interface KeyFormValues {
  name: string;
  dimension: string;
  modelScope: string[];
  /** YYYY-MM-DD, or null for never. */
  expiresAt: string | null;
  /** Each budget as typed; empty = no limit on it. */
  rateLimit: RateLimitTexts;
}

const BUDGET_LABELS: Record<Budget, MessageKey> = {
  requestsPerMinute: 'form.requestsPerMinute',
  tokensPerMinute: 'form.tokensPerMinute',
  concurrentRequests: 'form.concurrentRequests',
};

export interface ModelOption {
  name: string;
  displayName: string;
}

/** The dimensions a key can have, as `<option>`s labelled in the current language (also the key list's filter). */
export function DimensionOptions() {
  const { t } = useI18n();
  return (
    <>
      {DIMENSIONS.map((dimension) => (
        <option key={dimension} value={dimension}>
          {t(`dimension.${dimension}`)}
        </option>
      ))}
    </>
  );
}

interface KeyFormFieldsProps {
  values: KeyFormValues;
  onChange(values: KeyFormValues): void;
  models: readonly ModelOption[];
  /** Earliest selectable expiry (create only: an edit may keep a past date). */
  minDate?: string;
  /** Shown under the model list when no model is chosen on submit. */
  scopeError: boolean;
  /** The server named this field as wrong. */
  invalidField?: string | undefined;
}

export function KeyFormFields({ values, onChange, models, minDate, scopeError, invalidField }: KeyFormFieldsProps) {
  const { t } = useI18n();
  const id = useId();
  const set = (patch: Partial<KeyFormValues>) => onChange({ ...values, ...patch });
  const toggleModel = (name: string, on: boolean) =>
    set({ modelScope: on ? [...values.modelScope, name].filter((m, i, all) => all.indexOf(m) === i) : values.modelScope.filter((m) => m !== name) });

  return (
    <div className="form-grid">
      <div className="field">
        <label htmlFor={`${id}-name`}>{t('form.name')}</label>
        <input
          id={`${id}-name`}
          name="name"
          required
          maxLength={64}
          autoComplete="off"
          autoFocus
          value={values.name}
          aria-invalid={invalidField === 'name' || undefined}
          aria-describedby={`${id}-name-hint`}
          onChange={(event) => set({ name: event.target.value })}
        />
        <small id={`${id}-name-hint`} className="hint">
          {t('form.nameHint')}
        </small>
      </div>

      <div className="field">
        <label htmlFor={`${id}-dimension`}>{t('form.dimension')}</label>
        <select
          id={`${id}-dimension`}
          name="dimension"
          value={values.dimension}
          aria-invalid={invalidField === 'dimension' || undefined}
          onChange={(event) => set({ dimension: event.target.value })}
        >
          <DimensionOptions />
        </select>
      </div>

      <fieldset className="field" aria-describedby={`${id}-scope-hint`} aria-invalid={scopeError || invalidField === 'model_scope' || undefined}>
        <legend>{t('form.modelScope')}</legend>
        <div className="checkbox-list">
          {models.map((model) => (
            <label key={model.name} className="checkbox">
              <input
                type="checkbox"
                name="modelScope"
                value={model.name}
                checked={values.modelScope.includes(model.name)}
                onChange={(event) => toggleModel(model.name, event.target.checked)}
              />
              <span className="mono">{model.name}</span>
              {model.displayName && model.displayName !== model.name ? <span className="muted"> · {model.displayName}</span> : null}
            </label>
          ))}
        </div>
        <small id={`${id}-scope-hint`} className={scopeError ? 'hint hint-error' : 'hint'}>
          {scopeError ? t('form.modelScopeRequired') : t('form.modelScopeHint')}
        </small>
      </fieldset>

      <fieldset className="field">
        <legend>{t('form.expiresAt')}</legend>
        <div className="inline-fields">
          <input
            type="date"
            name="expiresAt"
            aria-label={t('form.expiresAt')}
            required={values.expiresAt !== null}
            disabled={values.expiresAt === null}
            min={minDate}
            value={values.expiresAt ?? ''}
            aria-invalid={invalidField === 'expires_at' || undefined}
            onChange={(event) => set({ expiresAt: event.target.value })}
          />
          <label className="checkbox">
            <input
              type="checkbox"
              name="never"
              checked={values.expiresAt === null}
              onChange={(event) => set({ expiresAt: event.target.checked ? null : localToday(new Date(Date.now() + SUGGESTED_DAYS * 86_400_000)) })}
            />
            {t('form.never')}
          </label>
        </div>
      </fieldset>

      <fieldset className="field" aria-describedby={`${id}-rate-hint`}>
        <legend>{t('form.rateLimit')}</legend>
        <div className="inline-fields">
          {BUDGETS.map((budget) => (
            <label key={budget} className="field">
              <span className="field-label">{t(BUDGET_LABELS[budget])}</span>
              <input
                type="number"
                name={budget}
                inputMode="numeric"
                min={1}
                step={1}
                value={values.rateLimit[budget]}
                aria-invalid={invalidField === BUDGET_FIELDS[budget] || undefined}
                onChange={(event) => set({ rateLimit: { ...values.rateLimit, [budget]: event.target.value } })}
              />
            </label>
          ))}
        </div>
        <small id={`${id}-rate-hint`} className="hint">
          {t('form.rateLimitHint')}
        </small>
      </fieldset>
    </div>
  );
}

interface KeyFormDialogProps {
  title: string;
  /** The form element's id, which the footer's submit button points at. */
  formId: string;
  /** The submit button's label while no save is running. */
  submitLabel: string;
  values: KeyFormValues;
  onChange(values: KeyFormValues): void;
  models: readonly ModelOption[];
  /** Earliest selectable expiry (create only: an edit may keep a past date). */
  minDate?: string;
  /** The last failed save: shown above the fields, and the field the server named is marked. */
  error: unknown;
  saving: boolean;
  /** A submit with at least one model chosen; with none, the form says so and this is not called. */
  onSubmit(): Promise<void>;
  onClose(): void;
}

export function KeyFormDialog({ title, formId, submitLabel, values, onChange, models, minDate, error, saving, onSubmit, onClose }: KeyFormDialogProps) {
  const { t } = useI18n();
  const [scopeError, setScopeError] = useState(false);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (values.modelScope.length === 0) {
      setScopeError(true);
      return;
    }
    setScopeError(false);
    void onSubmit();
  };

  return (
    <Dialog
      title={title}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t('form.cancel')}
          </button>
          <button type="submit" form={formId} className="button button-primary" disabled={saving}>
            {saving ? t('form.saving') : submitLabel}
          </button>
        </>
      }
    >
      <form id={formId} onSubmit={submit}>
        <ErrorBanner error={error} />
        <KeyFormFields
          values={values}
          onChange={onChange}
          models={models}
          minDate={minDate}
          scopeError={scopeError}
          invalidField={error instanceof ApiError ? error.field : undefined}
        />
      </form>
    </Dialog>
  );
}
