import { expect } from 'chai';
import { AppError } from '../../../src/errors';
import { resolvePolicies } from '../../../src/guardrails';

describe('guardrail policies', () => {
  it('default by category: PII and secrets redacted, injection flagged, block list blocked', () => {
    expect(resolvePolicies({})).to.deep.equal({
      'cn-id-card': 'redact',
      'cn-mobile': 'redact',
      'bank-card': 'redact',
      email: 'redact',
      'api-secret': 'redact',
      'prompt-injection': 'flag',
      'block-list': 'block',
    });
  });

  it('applies overrides in order, later layers winning', () => {
    const policies = resolvePolicies({ email: 'off', 'prompt-injection': 'block' }, { email: 'flag', 'bank-card': undefined });
    expect(policies.email).to.equal('flag');
    expect(policies['prompt-injection']).to.equal('block');
    expect(policies['bank-card']).to.equal('redact');
  });

  it('rejects an unknown rule name instead of silently keeping the default', () => {
    expect(() => resolvePolicies({ 'e-mail': 'off' }))
      .to.throw(AppError)
      .with.property('field', 'guardrails.policies.e-mail');
  });

  it('lets a layer name a category for all its rules, a rule in the same layer winning', () => {
    const policies = resolvePolicies({ pii: 'block', email: 'flag' }, { secret: 'off' });
    expect(policies).to.include({ 'cn-id-card': 'block', 'cn-mobile': 'block', 'bank-card': 'block', email: 'flag', 'api-secret': 'off' });
    expect(resolvePolicies({ pii: 'off' }, { 'cn-mobile': 'redact' })['cn-mobile']).to.equal('redact');
  });
});
