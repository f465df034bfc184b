// The events an account can subscribe to, and its credit-alert thresholds.
import { invalid } from '../../errors';

export const WEBHOOK_EVENTS = [
  'credit.threshold_reached',
  'credit.limit_reached',
  'credit.restored',
  'key.suspended',
  'key.resumed',
  'key.cancelled',
  'key.expiring',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** Percentages of the monthly limit an account is alerted at without a choice of its own. */
export const DEFAULT_THRESHOLDS: readonly number[] = [80, 100];
export const MAX_THRESHOLDS = 5;

/** Integers 1..100, ascending, unique, at most five (400 naming `thresholds` otherwise). */
export function parseThresholds(value: unknown): number[] {
  const rule = `thresholds must be 1 to ${MAX_THRESHOLDS} unique integers from 1 to 100 in ascending order, e.g. [80, 100]`;
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_THRESHOLDS) throw invalid('thresholds', rule);
  for (let i = 0; i < value.length; i++) {
    const t: unknown = value[i];
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 100) throw invalid('thresholds', rule);
    if (i > 0 && t <= (value[i - 1] as number)) throw invalid('thresholds', rule);
  }
  return value as number[];
}

/** A non-empty list of known event types without repeats (400 naming `events` otherwise). */
export function parseEvents(value: unknown): WebhookEventType[] {
  const rule = `events must be a non-empty list of: ${WEBHOOK_EVENTS.join(', ')}`;
  if (!Array.isArray(value) || value.length === 0) throw invalid('events', rule);
  const known = new Set<string>(WEBHOOK_EVENTS);
  for (const event of value) if (typeof event !== 'string' || !known.has(event)) throw invalid('events', `${rule}; got ${JSON.stringify(event)}`);
  if (new Set(value).size !== value.length) throw invalid('events', `${rule}; each at most once`);
  return value as WebhookEventType[];
}

/** The highest threshold `usedMicros` has reached against `limitMicros`, or null (none, or no limit). */
export function reachedThreshold(thresholds: readonly number[], limitMicros: number | null, usedMicros: number): number | null {
  if (limitMicros === null) return null;
  let reached: number | null = null;
  for (const t of thresholds) if (BigInt(usedMicros) * 100n >= BigInt(limitMicros) * BigInt(t)) reached = t;
  return reached;
}
