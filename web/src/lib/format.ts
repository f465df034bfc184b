// Display rules shared by the table, dialogs and the usage view.
import type { MessageKey } from './messages';

export const KEY_STATUSES = ['active', 'suspended', 'cancelled', 'expired'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

export const DIMENSIONS = ['部门', '业务线', '成本中心'] as const;

export const PRICE_TIERS = [
  'no_thinking.input_cache_hit',
  'no_thinking.input_cache_miss',
  'no_thinking.output',
  'thinking.input_cache_hit',
  'thinking.input_cache_miss',
  'thinking.output',
] as const;

export const isKeyStatus = (value: string): value is KeyStatus => (KEY_STATUSES as readonly string[]).includes(value);

export function statusKey(status: string): MessageKey | null {
  return isKeyStatus(status) ? `status.${status}` : null;
}

export function dimensionKey(dimension: string): MessageKey | null {
  return (DIMENSIONS as readonly string[]).includes(dimension) ? (`dimension.${dimension}` as MessageKey) : null;
}

export function tierKey(tier: string): MessageKey | null {
  return (PRICE_TIERS as readonly string[]).includes(tier) ? (`tier.${tier}` as MessageKey) : null;
}

/**
 * Share of the credit limit a key used this month, 0–1, for the usage bar.
 * Only a visual hint, so a float is fine here; amounts themselves stay the
 * server's exact decimal strings.
 */
export function limitShare(monthAmount: string, creditLimit: string): number {
  const limit = Number(creditLimit);
  const used = Number(monthAmount);
  if (!Number.isFinite(limit) || !Number.isFinite(used) || limit <= 0) return used > 0 ? 1 : 0;
  return Math.min(1, Math.max(0, used / limit));
}

/** Today in the browser's zone, YYYY-MM-DD (the lower bound of a date input). */
export function localToday(now = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/** An ISO instant as `YYYY-MM-DD HH:MM` in the browser's zone (the end of a rotation grace). */
export function localDateTime(iso: string): string {
  const at = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}`;
}
