// The key table: the columns of docs/architecture.md §16.8 and one row of actions per key.
import type { KeyRowFragment } from '../gql/graphql';
import { dimensionKey, limitShare, localDateTime, statusKey } from '../lib/format';
import { useI18n } from '../lib/i18n';
import { allowedActions, type RowAction } from './key-actions';

export interface CreditHint {
  creditLimit: string;
  currency: string;
  /** Month-to-date amount per key id (keys without usage are absent). */
  monthAmounts: ReadonlyMap<string, string>;
}

interface KeyTableProps {
  keys: readonly KeyRowFragment[];
  canMutate: boolean;
  /** Null when the account has no credit limit: the usage column shows the number only. */
  credit: CreditHint | null;
  /** The key whose action is in flight: its buttons wait. */
  busyKeyId: string | null;
  loading: boolean;
  onAction(action: RowAction, key: KeyRowFragment): void;
}

const ACTIONS: readonly RowAction[] = ['edit', 'suspend', 'resume', 'rotate', 'cancel', 'usage'];

export function KeyTable({ keys, canMutate, credit, busyKeyId, loading, onAction }: KeyTableProps) {
  const { t, formatInt } = useI18n();
  return (
    <div className="table-wrap">
      <table className="table" aria-busy={loading}>
        <caption className="visually-hidden">{t('keys.tableCaption')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('col.name')}</th>
            <th scope="col">{t('col.dimension')}</th>
            <th scope="col">{t('col.status')}</th>
            <th scope="col">{t('col.usage')}</th>
            <th scope="col">{t('col.modelScope')}</th>
            <th scope="col">{t('col.expiresAt')}</th>
            <th scope="col">{t('col.lastUsedAt')}</th>
            <th scope="col">{t('col.rateLimit')}</th>
            <th scope="col" className="actions-col">
              {t('col.actions')}
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.length === 0 ? (
            <tr>
              <td colSpan={9} className="empty">
                {loading ? t('app.loading') : t('keys.empty')}
              </td>
            </tr>
          ) : (
            keys.map((key) => {
              const nameId = `key-name-${key.id}`;
              const status = statusKey(key.status);
              const dimension = dimensionKey(key.dimension);
              const allowed = allowedActions(key, canMutate);
              const monthAmount = credit ? (credit.monthAmounts.get(key.id) ?? '0') : null;
              const share = credit && monthAmount !== null ? limitShare(monthAmount, credit.creditLimit) : 0;
              return (
                <tr key={key.id} data-key-id={key.id} data-status={key.status}>
                  <td data-col="name">
                    <div className="key-name" id={nameId}>
                      {key.name}
                    </div>
                    <div className="mono muted small">{key.secretHint}</div>
                    <RotationNote apiKey={key} />
                  </td>
                  <td data-col="dimension">{dimension ? t(dimension) : key.dimension}</td>
                  <td data-col="status">
                    <span className={`badge badge-${key.status}`}>{status ? t(status) : key.status}</span>
                    {key.suspendedReason === 'credit_limit' ? (
                      <span className="badge badge-credit" title={t('status.creditHintTitle')}>
                        {t('status.creditHint')}
                      </span>
                    ) : null}
                  </td>
                  <td data-col="usage">
                    <span className="num" data-value={key.usedTokens}>
                      {formatInt(key.usedTokens)}
                    </span>
                    {credit && monthAmount !== null ? (
                      <div
                        className="usage-bar"
                        role="meter"
                        aria-valuemin={0}
                        aria-valuemax={100}
                        aria-valuenow={Math.round(share * 100)}
                        aria-label={t('usage.monthHint', { amount: monthAmount, limit: credit.creditLimit, currency: credit.currency })}
                        title={t('usage.monthHint', { amount: monthAmount, limit: credit.creditLimit, currency: credit.currency })}
                      >
                        <div className={share >= 0.9 ? 'usage-bar-fill high' : 'usage-bar-fill'} style={{ width: `${(share * 100).toFixed(1)}%` }} />
                      </div>
                    ) : null}
                  </td>
                  <td data-col="modelScope">
                    <ul className="chips">
                      {key.modelScope.map((model) => (
                        <li key={model} className="chip mono">
                          {model}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td data-col="expiresAt" className="nowrap">
                    {key.expiresAt ?? t('expires.never')}
                  </td>
                  <td data-col="lastUsedAt" className="nowrap">
                    {key.lastUsedAt ?? <span className="muted">{t('lastUsed.never')}</span>}
                  </td>
                  <td data-col="rateLimit" className="nowrap">
                    <RateLimitText limit={key.rateLimit} />
                  </td>
                  <td className="actions">
                    {ACTIONS.map((action) => (
                      <button
                        key={action}
                        type="button"
                        className={action === 'cancel' ? 'link-button danger' : 'link-button'}
                        aria-describedby={nameId}
                        disabled={!allowed.has(action) || busyKeyId === key.id}
                        onClick={() => onAction(action, key)}
                      >
                        {t(`action.${action}`)}
                      </button>
                    ))}
                  </td>
                </tr>
              );
            })
          )}
        </tbody>
      </table>
    </div>
  );
}

/** A key's budgets, e.g. "60 次/分 · 并发 4"; "—" for no limit. */
function RateLimitText({ limit }: { limit: KeyRowFragment['rateLimit'] }) {
  const { t, formatInt } = useI18n();
  const parts = [
    limit?.requestsPerMinute != null ? t('rateLimit.requests', { n: formatInt(limit.requestsPerMinute) }) : null,
    limit?.tokensPerMinute != null ? t('rateLimit.tokens', { n: formatInt(limit.tokensPerMinute) }) : null,
    limit?.concurrentRequests != null ? t('rateLimit.concurrent', { n: formatInt(limit.concurrentRequests) }) : null,
  ].filter((part) => part !== null);
  return parts.length === 0 ? <span className="muted">—</span> : <>{parts.join(' · ')}</>;
}

/** Where a key stands in a rotation: the old key says when it stops, the successor what it replaced. */
function RotationNote({ apiKey }: { apiKey: KeyRowFragment }) {
  const { t } = useI18n();
  if (apiKey.rotatedTo && apiKey.status !== 'cancelled') {
    return (
      <div className="small rotation-note" data-rotation="old">
        {apiKey.cancelsAt ? t('rotation.oldUntil', { at: localDateTime(apiKey.cancelsAt) }) : t('rotation.oldSuspended')}
      </div>
    );
  }
  if (apiKey.rotatedFrom) {
    return (
      <div className="small muted rotation-note" data-rotation="new">
        {t('rotation.successor')}
      </div>
    );
  }
  return null;
}
