// Guardrail policies per account over in-memory repositories: the default
// chain (built-in, catalog, account), set and reset with their audit events
// and change notices, and the refusals naming the field.
import { expect } from 'chai';
import type { Actor } from '../../../../src/domain/actor';
import { AuditService } from '../../../../src/domain/audit/audit.service';
import { GuardrailPolicyService } from '../../../../src/domain/guardrails/guardrail-policy.service';
import type { AppError } from '../../../../src/errors';
import { MemoryAccountRepository } from '../../../support/memory/accounts';
import { MemoryAuditRepository } from '../../../support/memory/audit';
import { MemoryGuardrailPolicyRepository } from '../../../support/memory/guardrails';
import { MemoryTransactor, rejection } from '../../../support/memory/transactor';

const as = (accountId: string, role: Actor['role'] = 'owner'): Actor => ({ accountId, userId: 'usr_1', label: 'someone@example.com', role, ip: null });

describe('GuardrailPolicyService (in-memory repositories)', () => {
  let accounts: MemoryAccountRepository;
  let overrides: MemoryGuardrailPolicyRepository;
  let events: MemoryAuditRepository;
  let tx: MemoryTransactor;
  let changed: string[];
  let service: GuardrailPolicyService;

  beforeEach(() => {
    accounts = new MemoryAccountRepository();
    overrides = new MemoryGuardrailPolicyRepository();
    events = new MemoryAuditRepository();
    tx = new MemoryTransactor().register(accounts, overrides, events);
    changed = [];
    accounts.add({ id: 'acc_a' });
    accounts.add({ id: 'acc_b' });
    service = new GuardrailPolicyService(tx, overrides, accounts, new AuditService(events), {
      catalogPolicies: { email: 'block' },
      onChange: (accountId) => changed.push(accountId),
    });
  });

  const policyOf = async (accountId: string, rule: string) => (await service.list(as(accountId))).find((r) => r.rule === rule)!;

  it('lists every built-in rule in order with its category, default (built-in or catalog) and no override', async () => {
    const rules = await service.list(as('acc_a', 'viewer'));
    expect(rules.map((r) => r.rule)).to.deep.equal(['cn-id-card', 'cn-mobile', 'bank-card', 'email', 'api-secret', 'prompt-injection', 'block-list']);
    expect(rules.find((r) => r.rule === 'cn-mobile')).to.deep.equal({ rule: 'cn-mobile', category: 'pii', defaultPolicy: 'redact', policy: 'redact', overridden: false, updatedAt: null });
    expect(rules.find((r) => r.rule === 'email')).to.include({ defaultPolicy: 'block', policy: 'block' });
  });

  it('set: the account gets its policy, audited from the default, announced after the commit; other accounts keep theirs', async () => {
    const view = await service.set(as('acc_a', 'admin'), { rule: 'cn-mobile', policy: 'off' });
    expect(view).to.include({ rule: 'cn-mobile', policy: 'off', defaultPolicy: 'redact', overridden: true });
    expect(view.updatedAt).to.be.instanceOf(Date);
    expect(await policyOf('acc_a', 'cn-mobile')).to.include({ policy: 'off', overridden: true });
    expect(await policyOf('acc_b', 'cn-mobile')).to.include({ policy: 'redact', overridden: false });
    expect((await service.effectivePolicies('acc_a'))['cn-mobile']).to.equal('off');
    expect(events.of('guardrail.policy_set').map((e) => e.changes)).to.deep.equal([{ 'cn-mobile': { from: 'redact', to: 'off' } }]);
    expect(accounts.locked).to.deep.equal(['acc_a']);
    expect(tx.notices).to.deep.equal([{ channel: 'gateway_accounts', id: 'acc_a' }]);
    expect(changed).to.deep.equal(['acc_a']);
  });

  it('set again: one override per rule, audited from the previous choice; setting the same policy is not audited but still announced', async () => {
    await service.set(as('acc_a'), { rule: 'cn-mobile', policy: 'off' });
    await service.set(as('acc_a'), { rule: 'cn-mobile', policy: 'block' });
    await service.set(as('acc_a'), { rule: 'cn-mobile', policy: 'block' });
    expect(overrides.all()).to.have.length(1);
    expect(events.of('guardrail.policy_set').map((e) => e.changes)).to.deep.equal([
      { 'cn-mobile': { from: 'redact', to: 'off' } },
      { 'cn-mobile': { from: 'off', to: 'block' } },
    ]);
    expect(tx.notices).to.have.length(3);
  });

  it('reset: the rule follows the default again, audited from the override to the default; without an override nothing happens', async () => {
    await service.set(as('acc_a'), { rule: 'email', policy: 'flag' });
    const view = await service.reset(as('acc_a'), 'email');
    expect(view).to.include({ policy: 'block', overridden: false, updatedAt: null });
    expect(overrides.all()).to.deep.equal([]);
    expect(events.of('guardrail.policy_reset').map((e) => e.changes)).to.deep.equal([{ email: { from: 'flag', to: 'block' } }]);
    const noticesBefore = tx.notices.length;
    const again = await service.reset(as('acc_a'), 'email');
    expect(again).to.include({ policy: 'block', overridden: false });
    expect(events.of('guardrail.policy_reset')).to.have.length(1);
    expect(tx.notices).to.have.length(noticesBefore);
    expect(changed).to.deep.equal(['acc_a', 'acc_a']);
  });

  const refused: Array<[string, { rule: string; policy: string }, string, string]> = [
    ['an unknown rule', { rule: 'e-mail', policy: 'off' }, 'rule', 'unknown_guardrail_rule'],
    ['a category instead of a rule', { rule: 'pii', policy: 'off' }, 'rule', 'unknown_guardrail_rule'],
    ['a name inherited from Object.prototype', { rule: '__proto__', policy: 'off' }, 'rule', 'unknown_guardrail_rule'],
    ['an unknown policy', { rule: 'email', policy: 'mask' }, 'policy', 'invalid_field'],
  ];
  for (const [title, input, field, code] of refused) {
    it(`set refuses ${title} (400 naming ${field}) and changes nothing`, async () => {
      const error = (await rejection(service.set(as('acc_a'), input))) as AppError;
      expect(error).to.include({ status: 400, field, code });
      expect(overrides.all()).to.deep.equal([]);
      expect(events.all()).to.deep.equal([]);
      expect(tx.notices).to.deep.equal([]);
    });
  }

  it('refuses a viewer (403) for set and reset, and keeps the override', async () => {
    await service.set(as('acc_a'), { rule: 'cn-mobile', policy: 'off' });
    expect(((await rejection(service.set(as('acc_a', 'viewer'), { rule: 'cn-mobile', policy: 'block' }))) as AppError).code).to.equal('read_only_role');
    expect(((await rejection(service.reset(as('acc_a', 'viewer'), 'cn-mobile'))) as AppError).code).to.equal('read_only_role');
    expect(await policyOf('acc_a', 'cn-mobile')).to.include({ policy: 'off', overridden: true });
  });

  it('an actor of an account that is gone gets 404 and nothing is written', async () => {
    const error = (await rejection(service.set(as('acc_gone'), { rule: 'email', policy: 'off' }))) as AppError;
    expect(error).to.include({ status: 404, code: 'account_not_found' });
    expect(overrides.all()).to.deep.equal([]);
    expect(changed).to.deep.equal([]);
  });

  it('ignores a stored override of a rule the gateway no longer has', async () => {
    overrides.add({ id: 'grp_old', accountId: 'acc_a', rule: 'retired-rule', policy: 'off', updatedAt: new Date() });
    expect(await service.list(as('acc_a'))).to.have.length(7);
    expect(await service.effectivePolicies('acc_a')).to.not.have.property('retired-rule');
  });
});
