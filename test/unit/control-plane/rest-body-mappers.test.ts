// The REST control plane's wire checks before a body becomes a domain input:
// unknown fields refused naming them, wrong JSON types refused naming the
// field with the domain's own message, and a well-formed body mapped as is.
import { expect } from 'chai';
import { keyDefaultsInput } from '../../../src/control-plane/rest/account.mapper';
import { loginInput } from '../../../src/control-plane/rest/session.mapper';
import { creditAlertsInput, webhookInput } from '../../../src/control-plane/rest/webhook.mapper';
import type { AppError } from '../../../src/errors';

const refusal = (work: () => unknown): AppError => {
  try {
    work();
  } catch (error) {
    return error as AppError;
  }
  throw new Error('expected a refusal');
};

describe('REST body mappers', () => {
  it('key defaults: rate_limit required in an object, no other field, budgets numbers or null', () => {
    const limit = { requests_per_minute: 60, tokens_per_minute: null, concurrent_requests: 4 };
    expect(keyDefaultsInput({ rate_limit: limit })).to.deep.equal({ rateLimit: limit });
    expect(keyDefaultsInput({ rate_limit: null })).to.deep.equal({ rateLimit: null });
    for (const body of [undefined, null, [], 'x', {}]) expect(refusal(() => keyDefaultsInput(body)), JSON.stringify(body)).to.include({ status: 400, field: 'rate_limit' });
    expect(refusal(() => keyDefaultsInput({ rate_limit: null, extra: 1 }))).to.include({ field: 'extra', code: 'unknown_field' });
    expect(refusal(() => keyDefaultsInput({ rate_limit: 'fast' }))).to.include({ field: 'rate_limit' });
    expect(refusal(() => keyDefaultsInput({ rate_limit: { requests_per_minute: '60' } }))).to.include({ field: 'rate_limit.requests_per_minute' });
  });

  it('credit alerts: thresholds a list of numbers, no other field', () => {
    expect(creditAlertsInput({ thresholds: [80, 100] })).to.deep.equal({ thresholds: [80, 100] });
    expect(refusal(() => creditAlertsInput({ thresholds: [80], note: 'x' }))).to.include({ field: 'note', code: 'unknown_field' });
    for (const body of [{}, { thresholds: '80' }, { thresholds: ['80'] }, null, 'x']) {
      expect(refusal(() => creditAlertsInput(body)), JSON.stringify(body)).to.include({ status: 400, field: 'thresholds' });
    }
  });

  it('webhook creation: url a string, events a list of strings, no other field', () => {
    expect(webhookInput({ url: 'https://h.example/x', events: ['key.suspended'] })).to.deep.equal({ url: 'https://h.example/x', events: ['key.suspended'] });
    expect(refusal(() => webhookInput({ url: 'https://h.example/x', events: ['key.suspended'], secret: 's' }))).to.include({ field: 'secret', code: 'unknown_field' });
    expect(refusal(() => webhookInput({ url: 'https://h.example/x', events: 'key.suspended' }))).to.include({ field: 'events' });
    expect(refusal(() => webhookInput({ url: 'https://h.example/x', events: [1] }))).to.include({ field: 'events' });
    expect(refusal(() => webhookInput({ url: 5, events: ['key.suspended'] }))).to.include({ field: 'url' });
    expect(refusal(() => webhookInput({}))).to.include({ field: 'events' });
  });

  it('login: e-mail and password strings', () => {
    expect(loginInput({ email: 'a@example.com', password: 'pw' })).to.deep.equal({ email: 'a@example.com', password: 'pw' });
    expect(refusal(() => loginInput({ password: 'pw' }))).to.include({ field: 'email', message: 'email is required' });
    expect(refusal(() => loginInput({ email: 'a@example.com', password: 1 }))).to.include({ field: 'password', message: 'password is required' });
    expect(refusal(() => loginInput(null))).to.include({ field: 'email' });
  });
});
