// The account service over in-memory repositories: what an operator and an
// account's users see of accounts, their key defaults and credit limit —
// validation naming the field, audit events with the change, and the change
// notice sent only once the unit of work commits.
import { expect } from 'chai';
import { AccountService } from '../../../../src/domain/accounts/account.service';
import type { Actor } from '../../../../src/domain/actor';
import { AuditService } from '../../../../src/domain/audit/audit.service';
import type { AppError } from '../../../../src/errors';
import { MemoryAccountRepository } from '../../../support/memory/accounts';
import { MemoryAuditRepository } from '../../../support/memory/audit';
import { MemoryTransactor, rejection } from '../../../support/memory/transactor';

const as = (accountId: string, role: Actor['role'] = 'owner'): Actor => ({ accountId, userId: 'usr_1', label: 'someone@example.com', role, ip: '203.0.113.9' });
const operator = (accountId: string): Actor => ({ accountId, userId: null, label: 'operator-cli', role: 'owner', ip: null });

describe('AccountService (in-memory repositories)', () => {
  let accounts: MemoryAccountRepository;
  let events: MemoryAuditRepository;
  let tx: MemoryTransactor;
  let committed: string[];
  let service: AccountService;

  beforeEach(() => {
    accounts = new MemoryAccountRepository();
    events = new MemoryAuditRepository();
    tx = new MemoryTransactor().register(accounts, events);
    committed = [];
    service = new AccountService(tx, accounts, new AuditService(events), { timezone: 'Asia/Shanghai', currency: 'CNY' }, (id) => committed.push(id));
  });

  describe('create, list, get, findByName', () => {
    it('creates an account with the trimmed name, the default zone and currency, no limit and the refuse policy', async () => {
      const created = await service.create({ name: '  Acme  ' });
      expect(created).to.include({ name: 'Acme', timezone: 'Asia/Shanghai', currency: 'CNY', creditLimitMicros: null, creditOverflow: 'refuse' });
      expect(created.id).to.match(/^acc_/);
      expect(await service.get(created.id)).to.deep.equal(created);
      expect(await service.findByName('Acme')).to.deep.equal(created);
      expect(await service.findByName('Nobody')).to.equal(null);
    });

    it('keeps a given zone and credit limit', async () => {
      const created = await service.create({ name: 'Berlin', timezone: 'Europe/Berlin', creditLimitMicros: 5_000_000_000 });
      expect(created).to.include({ timezone: 'Europe/Berlin', creditLimitMicros: 5_000_000_000 });
    });

    const invalid: Array<[string, { name: string; timezone?: string }, string]> = [
      ['an empty name', { name: '   ' }, 'name'],
      ['a name over 128 characters', { name: 'n'.repeat(129) }, 'name'],
      ['a zone that is not IANA', { name: 'Zoned', timezone: 'Mars/Olympus' }, 'timezone'],
    ];
    for (const [title, input, field] of invalid) {
      it(`refuses ${title} (400 naming ${field}) and adds nothing`, async () => {
        const error = (await rejection(service.create(input))) as AppError;
        expect(error).to.include({ status: 400, code: 'invalid_field', field });
        expect(await service.list()).to.deep.equal([]);
      });
    }

    it('refuses a name that is taken (409 account_name_taken naming name) and rolls the unit of work back', async () => {
      await service.create({ name: 'Acme' });
      const error = (await rejection(service.create({ name: 'Acme' }))) as AppError;
      expect(error).to.include({ status: 409, code: 'account_name_taken', field: 'name' });
      expect(await service.list()).to.have.length(1);
      expect(tx.rollbacks).to.equal(1);
    });

    it('lists accounts oldest first', async () => {
      accounts.add({ id: 'acc_new', name: 'new', createdAt: new Date('2026-02-01T00:00:00Z') });
      accounts.add({ id: 'acc_old', name: 'old', createdAt: new Date('2026-01-01T00:00:00Z') });
      expect((await service.list()).map((a) => a.id)).to.deep.equal(['acc_old', 'acc_new']);
    });

    it('answers 404 account_not_found for an unknown account', async () => {
      const error = (await rejection(service.get('acc_none'))) as AppError;
      expect(error).to.include({ status: 404, code: 'account_not_found' });
    });
  });

  describe('key defaults', () => {
    beforeEach(() => {
      accounts.add({ id: 'acc_a' });
      accounts.add({ id: 'acc_b' });
    });

    it('has none until set; a set limit is read back, audited with from/to, and touches no other account', async () => {
      expect(await service.keyDefaults(as('acc_a'))).to.deep.equal({ rateLimit: null });
      const limit = { requests_per_minute: 60, tokens_per_minute: null, concurrent_requests: 4 };
      expect(await service.setKeyDefaults(as('acc_a', 'admin'), { rateLimit: limit })).to.deep.equal({ rateLimit: limit });
      expect(await service.keyDefaults(as('acc_a', 'viewer'))).to.deep.equal({ rateLimit: limit });
      expect(await service.keyDefaults(as('acc_b'))).to.deep.equal({ rateLimit: null });
      const [event] = events.of('account.key_defaults_set');
      expect(event).to.include({ accountId: 'acc_a', actor: 'someone@example.com', apiKeyId: null });
      expect(event!.changes).to.deep.equal({ rate_limit: { from: null, to: limit } });
    });

    it('a limit of only null budgets is no limit', async () => {
      await service.setKeyDefaults(as('acc_a'), { rateLimit: { requests_per_minute: 5, tokens_per_minute: null, concurrent_requests: null } });
      const cleared = await service.setKeyDefaults(as('acc_a'), { rateLimit: { requests_per_minute: null, tokens_per_minute: null, concurrent_requests: null } });
      expect(cleared).to.deep.equal({ rateLimit: null });
      expect(events.of('account.key_defaults_set').at(-1)!.changes).to.deep.equal({ rate_limit: { from: { requests_per_minute: 5, tokens_per_minute: null, concurrent_requests: null }, to: null } });
    });

    it('refuses a budget out of range (400 naming the budget) and writes nothing', async () => {
      const error = (await rejection(service.setKeyDefaults(as('acc_a'), { rateLimit: { requests_per_minute: 0, tokens_per_minute: null, concurrent_requests: null } }))) as AppError;
      expect(error).to.include({ status: 400, field: 'rate_limit.requests_per_minute' });
      expect(await service.keyDefaults(as('acc_a'))).to.deep.equal({ rateLimit: null });
      expect(events.all()).to.deep.equal([]);
    });

    it('refuses a viewer (403 read_only_role) and writes nothing', async () => {
      const error = (await rejection(service.setKeyDefaults(as('acc_a', 'viewer'), { rateLimit: null }))) as AppError;
      expect(error).to.include({ status: 403, code: 'read_only_role' });
      expect(events.all()).to.deep.equal([]);
    });

    it('answers 404 for an actor whose account is gone', async () => {
      expect(((await rejection(service.keyDefaults(as('acc_gone')))) as AppError).code).to.equal('account_not_found');
      expect(((await rejection(service.setKeyDefaults(as('acc_gone'), { rateLimit: null }))) as AppError).code).to.equal('account_not_found');
      expect(events.all()).to.deep.equal([]);
    });
  });

  describe('credit limit', () => {
    beforeEach(() => {
      accounts.add({ id: 'acc_a', creditLimitMicros: 1_000_000 });
    });

    it('sets the limit and the overflow policy under the row lock, audits both, and notifies after the commit', async () => {
      const view = await service.setCreditLimit(operator('acc_a'), 2_000_000, 'lower_max_tokens');
      expect(view).to.include({ creditLimitMicros: 2_000_000, creditOverflow: 'lower_max_tokens' });
      expect(await service.get('acc_a')).to.include({ creditLimitMicros: 2_000_000, creditOverflow: 'lower_max_tokens' });
      expect(accounts.locked).to.deep.equal(['acc_a']);
      const [event] = events.of('account.credit_limit_set');
      expect(event).to.include({ actor: 'operator-cli', actorUserId: null });
      expect(event!.changes).to.deep.equal({ credit_limit_micros: { from: 1_000_000, to: 2_000_000 }, credit_overflow: { from: 'refuse', to: 'lower_max_tokens' } });
      expect(tx.notices).to.deep.equal([{ channel: 'gateway_accounts', id: 'acc_a' }]);
      expect(committed).to.deep.equal(['acc_a']);
    });

    it('leaves what is not given as it is: the overflow alone, or the limit lifted to none', async () => {
      await service.setCreditLimit(operator('acc_a'), undefined, 'lower_max_tokens');
      expect(await service.get('acc_a')).to.include({ creditLimitMicros: 1_000_000, creditOverflow: 'lower_max_tokens' });
      expect(events.of('account.credit_limit_set')[0]!.changes).to.deep.equal({ credit_overflow: { from: 'refuse', to: 'lower_max_tokens' } });
      await service.setCreditLimit(operator('acc_a'), null);
      expect(await service.get('acc_a')).to.include({ creditLimitMicros: null, creditOverflow: 'lower_max_tokens' });
    });

    it('for an unknown account: 404, no audit event, no notice, no local signal', async () => {
      const error = (await rejection(service.setCreditLimit(operator('acc_none'), 5))) as AppError;
      expect(error).to.include({ status: 404, code: 'account_not_found' });
      expect(events.all()).to.deep.equal([]);
      expect(tx.notices).to.deep.equal([]);
      expect(committed).to.deep.equal([]);
    });
  });
});
