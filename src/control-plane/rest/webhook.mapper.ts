// Credit-alert and webhook bodies on the wire → the domain's inputs. Here:
// the fields a body may hold and their JSON types; a value of the wrong type
// gets the domain's own 400 naming the field (its parse refuses it). The
// value rules (ranges, order, known events, SSRF-safe targets) run in the
// service, for every transport.
import { isObject } from '../../core/json-edit';
import type { CreditAlertsInput, WebhookInput } from '../../domain/webhooks/webhook.service';
import { parseEvents, parseThresholds } from '../../domain/webhooks/webhook-events';
import { parseTarget } from '../../domain/webhooks/webhook-target';
import { onlyFields } from './wire-body';

const isList = <T>(value: unknown, item: (element: unknown) => element is T): value is T[] => Array.isArray(value) && value.every(item);
const isNumber = (value: unknown): value is number => typeof value === 'number';
const isString = (value: unknown): value is string => typeof value === 'string';

export function creditAlertsInput(body: unknown): CreditAlertsInput {
  onlyFields(body, ['thresholds']);
  const thresholds = isObject(body) ? body.thresholds : undefined;
  return { thresholds: isList(thresholds, isNumber) ? thresholds : parseThresholds(thresholds) };
}

export function webhookInput(body: unknown): WebhookInput {
  onlyFields(body, ['url', 'events']);
  const record = isObject(body) ? body : {};
  const events = isList(record.events, isString) ? record.events : parseEvents(record.events);
  const url = isString(record.url) ? record.url : parseTarget(record.url).href;
  return { url, events };
}
