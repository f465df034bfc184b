// 用量 of one key: a date range (default: this month to today in the account
// zone, as the server decides), the six tiers as a chart and as a table.
import { useState, type FormEvent } from 'react';
import { Dialog } from '../components/dialog';
import { ErrorBanner } from '../components/error-banner';
import { KeyUsageDocument, type KeyRowFragment } from '../gql/graphql';
import type { GraphqlRequest } from '../lib/graphql-client';
import { tierKey } from '../lib/format';
import { useI18n } from '../lib/i18n';
import { useAsync } from '../lib/use-async';
import { TierChart } from './tier-chart';

interface UsageDialogProps {
  request: GraphqlRequest;
  apiKey: KeyRowFragment;
  onClose(): void;
}

interface Range {
  start: string | null;
  end: string | null;
}

export function UsageDialog({ request, apiKey, onClose }: UsageDialogProps) {
  const { t, formatInt } = useI18n();
  const [range, setRange] = useState<Range>({ start: null, end: null });
  const [draft, setDraft] = useState<{ start: string; end: string } | null>(null);
  const usage = useAsync(() => request(KeyUsageDocument, { id: apiKey.id, start: range.start, end: range.end }), [request, apiKey.id, range]);
  const data = usage.data?.keyUsage;
  // The inputs start from the range the server answered for.
  const inputs = draft ?? { start: data?.start ?? '', end: data?.end ?? '' };

  const apply = (event: FormEvent) => {
    event.preventDefault();
    if (!inputs.start || !inputs.end) return;
    setRange({ start: inputs.start, end: inputs.end });
  };

  return (
    <Dialog
      wide
      title={t('usageView.title', { name: apiKey.name })}
      onClose={onClose}
      footer={
        <button type="button" className="button" onClick={onClose}>
          {t('usageView.close')}
        </button>
      }
    >
      <form className="toolbar" onSubmit={apply}>
        <div className="field field-inline">
          <label htmlFor="usage-start">{t('usageView.start')}</label>
          <input
            id="usage-start"
            type="date"
            required
            value={inputs.start}
            max={inputs.end || undefined}
            onChange={(event) => setDraft({ ...inputs, start: event.target.value })}
          />
        </div>
        <div className="field field-inline">
          <label htmlFor="usage-end">{t('usageView.end')}</label>
          <input
            id="usage-end"
            type="date"
            required
            value={inputs.end}
            min={inputs.start || undefined}
            onChange={(event) => setDraft({ ...inputs, end: event.target.value })}
          />
        </div>
        <button type="submit" className="button button-primary" disabled={usage.loading}>
          {t('usageView.apply')}
        </button>
      </form>

      <ErrorBanner error={usage.error} />
      {data ? (
        <div className="usage-view" aria-busy={usage.loading}>
          <dl className="summary">
            <div>
              <dt>{t('usageView.calls')}</dt>
              <dd data-testid="usage-calls">{formatInt(data.calls)}</dd>
            </div>
            <div>
              <dt>{t('usageView.tokens')}</dt>
              <dd data-testid="usage-total-tokens">{formatInt(data.totalTokens)}</dd>
            </div>
            <div>
              <dt>{t('usageView.amount')}</dt>
              <dd data-testid="usage-total-amount">
                {data.totalAmount} {data.currency}
              </dd>
            </div>
          </dl>
          <p className="muted">{t('usageView.range', { start: data.start, end: data.end })}</p>
          <TierChart tiers={data.tiers} label={t('usageView.chartLabel')} t={t} formatInt={formatInt} />
          <table className="table table-compact">
            <caption className="visually-hidden">{t('usageView.tableCaption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('usageView.tier')}</th>
                <th scope="col" className="num">
                  {t('usageView.tokens')}
                </th>
                <th scope="col" className="num">
                  {t('usageView.unitPrice')}
                </th>
                <th scope="col" className="num">
                  {t('usageView.amount')}
                </th>
              </tr>
            </thead>
            <tbody>
              {data.tiers.map((line) => {
                const key = tierKey(line.tier);
                return (
                  <tr key={line.tier} data-tier={line.tier}>
                    <th scope="row">
                      {key ? t(key) : line.tier}
                      <div className="mono muted small">{line.tier}</div>
                    </th>
                    <td className="num" data-cell="tokens">
                      {formatInt(line.tokens)}
                    </td>
                    <td className="num" data-cell="unit-price">
                      {line.unitPrice}
                    </td>
                    <td className="num" data-cell="amount">
                      {line.amount}
                    </td>
                  </tr>
                );
              })}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">{t('usageView.total')}</th>
                <td className="num" data-cell="total-tokens">
                  {formatInt(data.totalTokens)}
                </td>
                <td />
                <td className="num" data-cell="total-amount">
                  {data.totalAmount} {data.currency}
                </td>
              </tr>
            </tfoot>
          </table>
        </div>
      ) : usage.loading ? (
        <p className="muted">{t('app.loading')}</p>
      ) : null}
    </Dialog>
  );
}
