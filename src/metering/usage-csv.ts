// The usage export's CSV shape, apart from the queries that feed it.
import { PRICE_TIERS } from '../core/catalog.types';
import type { UsageItem } from './usage-item';

/** Later columns (`estimated`, then `response_id`) come last, so spreadsheets and scripts that read the earlier columns by position keep working. */
export const CSV_HEADER = ['request_id', 'created_at', 'api_key_id', 'model', 'requested_model', 'routed_model', 'form', 'stream', 'thinking', 'status', ...PRICE_TIERS, 'total_tokens', 'amount', 'estimated', 'response_id'];

export function csvRow(item: UsageItem): string {
  const cells = [
    item.request_id,
    item.created_at,
    item.api_key_id,
    item.model,
    item.requested_model,
    item.routed_model ?? '',
    item.form,
    String(item.stream),
    String(item.thinking),
    item.status,
    ...PRICE_TIERS.map((t) => String(item.tiers[t])),
    String(item.total_tokens),
    item.amount,
    String(item.estimated),
    item.response_id ?? '',
  ];
  return `${cells.map(csvCell).join(',')}\n`;
}

function csvCell(value: string): string {
  // Also defuses spreadsheet formulas (=, +, -, @) in model names.
  const safe = /^[=+\-@]/.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
