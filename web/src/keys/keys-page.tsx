// 访问管理 / API 密钥: filters, the key table, pagination and the dialogs.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { ErrorBanner } from '../components/error-banner';
import { KeysPageDocument, ResumeApiKeyDocument, SuspendApiKeyDocument, type KeyRowFragment } from '../gql/graphql';
import type { GraphqlRequest } from '../lib/graphql-client';
import { KEY_STATUSES } from '../lib/format';
import { useI18n } from '../lib/i18n';
import type { MessageKey } from '../lib/messages';
import { useAsync } from '../lib/use-async';
import { CancelKeyDialog } from './cancel-key-dialog';
import { CreateKeyDialog } from './create-key-dialog';
import { EditKeyDialog } from './edit-key-dialog';
import { DimensionOptions, type ModelOption } from './key-form';
import type { RowAction } from './key-actions';
import { KeyTable, type CreditHint } from './key-table';
import { RotateKeyDialog } from './rotate-key-dialog';
import { UsageDialog } from './usage-dialog';

const SORTS = ['created_at:desc', 'created_at:asc', 'last_used_at:desc', 'last_used_at:asc'] as const;
type Sort = (typeof SORTS)[number];
const PAGE_SIZES = [10, 20, 50, 100] as const;

interface Query {
  status: string;
  dimension: string;
  q: string;
  sort: Sort;
  page: number;
  pageSize: number;
}

type OpenDialog =
  | { kind: 'create' }
  | { kind: 'edit'; key: KeyRowFragment }
  | { kind: 'cancel'; key: KeyRowFragment }
  | { kind: 'rotate'; key: KeyRowFragment }
  | { kind: 'usage'; key: KeyRowFragment }
  | null;

interface KeysPageProps {
  request: GraphqlRequest;
  models: readonly ModelOption[];
  canMutate: boolean;
  /** Current month (YYYY-MM) in the account zone, for month-to-date amounts. */
  month: string;
  /** Whether the account has a credit limit (then the usage column shows a bar). */
  hasCreditLimit: boolean;
  onSessionError(error: unknown): boolean;
}

export function KeysPage({ request, models, canMutate, month, hasCreditLimit, onSessionError }: KeysPageProps) {
  const { t, formatInt } = useI18n();
  const [query, setQuery] = useState<Query>({ status: '', dimension: '', q: '', sort: 'created_at:desc', page: 1, pageSize: 20 });
  const [search, setSearch] = useState('');
  const [dialog, setDialog] = useState<OpenDialog>(null);
  const [busyKeyId, setBusyKeyId] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  // Refreshed from every answer: the month turns and the operator may set or lift the limit.
  const [creditBasis, setCreditBasis] = useState({ month, hasLimit: hasCreditLimit });

  // The name search applies once typing pauses.
  useEffect(() => {
    const timer = window.setTimeout(() => setQuery((current) => (current.q === search.trim() ? current : { ...current, q: search.trim(), page: 1 })), 300);
    return () => window.clearTimeout(timer);
  }, [search]);

  const keys = useAsync(() => {
    const [sort, order] = query.sort.split(':') as [string, string];
    const filter = {
      ...(query.status ? { status: query.status } : {}),
      ...(query.dimension ? { dimension: query.dimension } : {}),
      ...(query.q ? { q: query.q } : {}),
    };
    return request(KeysPageDocument, {
      filter,
      page: query.page,
      pageSize: query.pageSize,
      sort,
      order,
      month: creditBasis.month,
      withMonthAmounts: creditBasis.hasLimit,
    });
  }, [request, query, creditBasis]);

  const creditStatus = keys.data?.creditStatus;
  useEffect(() => {
    if (!creditStatus) return;
    const hasLimit = creditStatus.creditLimit !== null;
    if (creditStatus.month !== creditBasis.month || hasLimit !== creditBasis.hasLimit) setCreditBasis({ month: creditStatus.month, hasLimit });
  }, [creditStatus, creditBasis]);

  useEffect(() => {
    if (keys.error) onSessionError(keys.error);
  }, [keys.error, onSessionError]);

  const page = keys.data?.apiKeys;
  const pages = page ? Math.max(1, Math.ceil(page.total / page.pageSize)) : 1;

  // Deleting the last rows of the last page (e.g. by a filter) moves back a page.
  useEffect(() => {
    if (page && page.items.length === 0 && page.total > 0 && query.page > 1) setQuery((current) => ({ ...current, page: pages }));
  }, [page, pages, query.page]);

  const credit = useMemo<CreditHint | null>(() => {
    const status = keys.data?.creditStatus;
    if (!status || status.creditLimit === null) return null;
    return {
      creditLimit: status.creditLimit,
      currency: status.currency,
      monthAmounts: new Map((keys.data?.settlement?.keys ?? []).map((line) => [line.apiKeyId, line.totalAmount])),
    };
  }, [keys.data]);

  const setFilter = (patch: Partial<Query>) => setQuery((current) => ({ ...current, ...patch, page: patch.page ?? 1 }));
  const reload = keys.reload;
  const closeDialog = useCallback(() => setDialog(null), []);

  const onAction = async (action: RowAction, key: KeyRowFragment) => {
    setActionError(null);
    if (action === 'edit' || action === 'cancel' || action === 'rotate' || action === 'usage') {
      setDialog({ kind: action, key });
      return;
    }
    setBusyKeyId(key.id);
    try {
      if (action === 'suspend') await request(SuspendApiKeyDocument, { id: key.id });
      else await request(ResumeApiKeyDocument, { id: key.id });
    } catch (error) {
      if (!onSessionError(error)) setActionError(error);
    } finally {
      setBusyKeyId(null);
      reload();
    }
  };

  const statusOptions: { value: string; label: string }[] = [
    { value: '', label: t('filter.all') },
    ...KEY_STATUSES.map((status) => ({ value: status, label: t(`status.${status}` as MessageKey) })),
  ];

  return (
    <section aria-labelledby="keys-heading" className="page">
      <nav aria-label={t('nav.breadcrumb')} className="breadcrumb">
        <ol>
          <li>{t('nav.access')}</li>
          <li aria-current="page">{t('nav.apiKeys')}</li>
        </ol>
      </nav>
      <div className="page-header">
        <div>
          <h1 id="keys-heading">{t('keys.title')}</h1>
          <p className="muted">{t('keys.subtitle')}</p>
        </div>
        <button type="button" className="button button-primary" disabled={!canMutate} onClick={() => setDialog({ kind: 'create' })}>
          {t('keys.create')}
        </button>
      </div>

      <form className="toolbar" role="search" onSubmit={(event) => event.preventDefault()}>
        <div className="field field-inline">
          <label htmlFor="filter-status">{t('filter.status')}</label>
          <select id="filter-status" value={query.status} onChange={(event) => setFilter({ status: event.target.value })}>
            {statusOptions.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field field-inline">
          <label htmlFor="filter-dimension">{t('filter.dimension')}</label>
          <select id="filter-dimension" value={query.dimension} onChange={(event) => setFilter({ dimension: event.target.value })}>
            <option value="">{t('filter.all')}</option>
            <DimensionOptions />
          </select>
        </div>
        <div className="field field-inline">
          <label htmlFor="filter-q">{t('filter.search')}</label>
          <input id="filter-q" type="search" placeholder={t('filter.searchPlaceholder')} value={search} onChange={(event) => setSearch(event.target.value)} />
        </div>
        <div className="field field-inline">
          <label htmlFor="filter-sort">{t('filter.sort')}</label>
          <select id="filter-sort" value={query.sort} onChange={(event) => setFilter({ sort: event.target.value as Sort })}>
            {SORTS.map((sort) => (
              <option key={sort} value={sort}>
                {t(`sort.${sort.replace(':', '.')}` as MessageKey)}
              </option>
            ))}
          </select>
        </div>
      </form>

      <CreditAlertBanner status={keys.data?.creditStatus} reachedThreshold={keys.data?.creditAlerts.reachedThreshold ?? null} />
      {keys.data?.creditStatus && keys.data.creditStatus.creditLimit !== null ? (
        <p className="credit-summary muted" data-testid="credit-summary" title={t('credit.summaryTitle')}>
          {t('credit.summary', {
            limit: keys.data.creditStatus.creditLimit,
            currency: keys.data.creditStatus.currency,
            used: keys.data.creditStatus.monthUsed,
            reserved: keys.data.creditStatus.reserved,
            remaining: keys.data.creditStatus.remaining ?? '0',
          })}
        </p>
      ) : null}

      <ErrorBanner error={actionError ?? keys.error} onDismiss={actionError ? () => setActionError(null) : undefined} />

      <KeyTable
        keys={page?.items ?? []}
        canMutate={canMutate}
        credit={credit}
        busyKeyId={busyKeyId}
        loading={keys.loading}
        onAction={(action, key) => void onAction(action, key)}
      />

      <nav className="pager" aria-label={t('pager.label')}>
        <span className="pager-total" data-testid="keys-total">
          {t('keys.total', { total: formatInt(page?.total ?? 0) })}
        </span>
        <div className="field field-inline">
          <label htmlFor="page-size">{t('pager.pageSize')}</label>
          <select id="page-size" value={query.pageSize} onChange={(event) => setFilter({ pageSize: Number(event.target.value) })}>
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </div>
        <button type="button" className="button" disabled={query.page <= 1} onClick={() => setFilter({ page: query.page - 1 })}>
          {t('pager.prev')}
        </button>
        <span className="pager-page" aria-live="polite">
          {t('pager.page', { page: query.page, pages })}
        </span>
        <button type="button" className="button" disabled={query.page >= pages} onClick={() => setFilter({ page: query.page + 1 })}>
          {t('pager.next')}
        </button>
      </nav>

      {dialog?.kind === 'create' ? <CreateKeyDialog request={request} models={models} onCreated={reload} onClose={closeDialog} /> : null}
      {dialog?.kind === 'edit' ? (
        <EditKeyDialog
          request={request}
          apiKey={dialog.key}
          models={models}
          onSaved={() => {
            closeDialog();
            reload();
          }}
          onClose={closeDialog}
        />
      ) : null}
      {dialog?.kind === 'cancel' ? (
        <CancelKeyDialog
          request={request}
          apiKey={dialog.key}
          onCancelled={() => {
            closeDialog();
            reload();
          }}
          onClose={closeDialog}
        />
      ) : null}
      {dialog?.kind === 'rotate' ? <RotateKeyDialog request={request} apiKey={dialog.key} onRotated={reload} onClose={closeDialog} /> : null}
      {dialog?.kind === 'usage' ? <UsageDialog request={request} apiKey={dialog.key} onClose={closeDialog} /> : null}
    </section>
  );
}

interface CreditAlertBannerProps {
  status: { creditLimit?: string | null; currency: string; monthUsed: string; suspended: boolean } | undefined;
  /** The highest of the account's alert thresholds the month has reached (creditAlerts). */
  reachedThreshold: number | null;
}

/** Shown once the month's settled usage has reached one of the account's credit-alert thresholds. */
function CreditAlertBanner({ status, reachedThreshold }: CreditAlertBannerProps) {
  const { t } = useI18n();
  if (!status || !status.creditLimit || (reachedThreshold === null && !status.suspended)) return null;
  const figures = { used: status.monthUsed, limit: status.creditLimit, currency: status.currency };
  return (
    <div className={`alert ${status.suspended ? 'alert-error' : 'alert-warning'}`} role="status" data-testid="credit-alert-banner">
      <span className="alert-text">
        {status.suspended ? t('credit.alertBannerLimit', figures) : t('credit.alertBanner', { ...figures, threshold: String(reachedThreshold) })}
      </span>
    </div>
  );
}
