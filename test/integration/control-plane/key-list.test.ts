// The key list (docs/architecture.md §14): pagination edges, filters by every (derived)
// status, dimension and name, and sorting with a stable order.
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { addDays, setExpiresAt, zoneToday } from './support';

interface Item {
  api_key_id: string;
  name: string;
  status: string;
  suspended_reason: string | null;
  dimension: string;
  used_tokens: number;
}
interface Page {
  total: number;
  page: number;
  page_size: number;
  items: Item[];
}

describe('REST control plane: key list', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });

  after(async () => {
    await t.close();
  });

  async function list(token: string, query = ''): Promise<Page> {
    const response = await api<Page>(t, 'GET', `/api/v1/keys${query ? `?${query}` : ''}`, token);
    expect(response.status, `${query}: ${JSON.stringify(response.body)}`).to.equal(200);
    return response.body;
  }
  const names = (page: Page) => page.items.map((k) => k.name);

  /** Keys created one after the other, with distinct created_at. */
  async function keysNamed(token: string, keyNames: string[], extra: Record<string, unknown> = {}): Promise<Record<string, string>> {
    const byName: Record<string, string> = {};
    for (const name of keyNames) {
      byName[name] = (await createKey(t, token, { name, ...extra })).api_key_id;
      await delay(3);
    }
    return byName;
  }

  describe('pagination', () => {
    let owner: TestAccount;
    let created: string[];

    before(async () => {
      owner = await createAccount(t);
      created = Object.keys(await keysNamed(owner.token, ['p1', 'p2', 'p3', 'p4', 'p5']));
    });

    it('page_size equal to the number of keys: one full page', async () => {
      const page = await list(owner.token, 'page_size=5');
      expect(page).to.include({ total: 5, page: 1, page_size: 5 });
      expect(page.items).to.have.length(5);
    });

    it('pages of 2: 2, 2, then a partial last page of 1, covering every key once in order', async () => {
      const pages = [await list(owner.token, 'page_size=2&page=1'), await list(owner.token, 'page_size=2&page=2'), await list(owner.token, 'page_size=2&page=3')];
      expect(pages.map((p) => p.items.length)).to.deep.equal([2, 2, 1]);
      expect(pages.map((p) => p.page)).to.deep.equal([1, 2, 3]);
      for (const p of pages) expect(p).to.include({ total: 5, page_size: 2 });
      expect(pages.flatMap(names)).to.deep.equal(names(await list(owner.token, 'page_size=100')));
      expect(pages.flatMap(names)).to.have.members(created);
    });

    it('a page beyond the end: no items, but the right total and the page asked for', async () => {
      for (const query of ['page_size=2&page=4', 'page=2', 'page=1000']) {
        const page = await list(owner.token, query);
        expect(page.items, query).to.deep.equal([]);
        expect(page.total, query).to.equal(5);
      }
      expect((await list(owner.token, 'page_size=2&page=4')).page).to.equal(4);
    });

    it('defaults to page 1 of 20 items', async () => {
      const many = await createAccount(t);
      for (let i = 0; i < 21; i++) await createKey(t, many.token, { name: `bulk-${String(i).padStart(2, '0')}` });
      const first = await list(many.token);
      expect(first).to.include({ total: 21, page: 1, page_size: 20 });
      expect(first.items).to.have.length(20);
      const second = await list(many.token, 'page=2');
      expect(second.items).to.have.length(1);
      expect([...names(first), ...names(second)]).to.have.length(21).and.to.have.members(Array.from({ length: 21 }, (_, i) => `bulk-${String(i).padStart(2, '0')}`));
    });

    it('an account with no keys: total 0, empty items', async () => {
      const empty = await createAccount(t);
      expect(await list(empty.token)).to.deep.equal({ total: 0, page: 1, page_size: 20, items: [] });
    });
  });

  describe('filter by status (stored and derived)', () => {
    let owner: TestAccount;
    let ids: Record<string, string>;

    before(async () => {
      owner = await createAccount(t, { timezone: 'UTC' });
      const today = zoneToday('UTC');
      ids = await keysNamed(owner.token, ['s-active', 's-active-today', 's-suspended', 's-cancelled', 's-expired', 's-suspended-expired']);
      await api(t, 'PUT', `/api/v1/keys/${ids['s-active-today']}`, owner.token, { expires_at: today });
      await api(t, 'POST', `/api/v1/keys/${ids['s-suspended']}/suspend`, owner.token);
      await api(t, 'DELETE', `/api/v1/keys/${ids['s-cancelled']}`, owner.token);
      await setExpiresAt(ids['s-expired']!, addDays(today, -1));
      await api(t, 'POST', `/api/v1/keys/${ids['s-suspended-expired']}/suspend`, owner.token);
      await setExpiresAt(ids['s-suspended-expired']!, addDays(today, -3));
    });

    const EXPECTED: Record<string, string[]> = {
      active: ['s-active', 's-active-today'],
      suspended: ['s-suspended', 's-suspended-expired'],
      cancelled: ['s-cancelled'],
      expired: ['s-expired'],
    };

    for (const [status, expected] of Object.entries(EXPECTED)) {
      it(`status=${status} → exactly ${expected.join(', ')}`, async () => {
        const page = await list(owner.token, `status=${status}&page_size=100`);
        expect(names(page)).to.have.members(expected);
        expect(page.total).to.equal(expected.length);
        expect(page.items.every((k) => k.status === status)).to.equal(true);
      });
    }

    it('without a status filter every key is listed, each with its derived status', async () => {
      const page = await list(owner.token, 'page_size=100');
      expect(page.total).to.equal(6);
      const statusOf = Object.fromEntries(page.items.map((k) => [k.name, k.status]));
      expect(statusOf).to.deep.equal({
        's-active': 'active',
        's-active-today': 'active',
        's-suspended': 'suspended',
        's-cancelled': 'cancelled',
        's-expired': 'expired',
        's-suspended-expired': 'suspended',
      });
    });

    it('an account over its credit limit lists live keys as suspended (credit_limit), none as active', async () => {
      const capped = await createAccount(t, { timezone: 'UTC', creditLimitMicros: 1_000_000 });
      const { pool } = await testDatabase();
      await pool.query('insert into account_month_usage (account_id, month, amount_micros) values ($1, $2, $3)', [
        capped.accountId,
        zoneToday('UTC').slice(0, 7),
        1_000_000,
      ]);
      const keys = await keysNamed(capped.token, ['c-live', 'c-owner', 'c-cancelled', 'c-expired']);
      await api(t, 'POST', `/api/v1/keys/${keys['c-owner']}/suspend`, capped.token);
      await api(t, 'DELETE', `/api/v1/keys/${keys['c-cancelled']}`, capped.token);
      await setExpiresAt(keys['c-expired']!, addDays(zoneToday('UTC'), -1));

      expect((await list(capped.token, 'status=active')).total).to.equal(0);
      const suspended = await list(capped.token, 'status=suspended');
      expect(Object.fromEntries(suspended.items.map((k) => [k.name, k.suspended_reason]))).to.deep.equal({ 'c-live': 'credit_limit', 'c-owner': 'owner' });
      expect(names(await list(capped.token, 'status=expired'))).to.deep.equal(['c-expired']);
      expect(names(await list(capped.token, 'status=cancelled'))).to.deep.equal(['c-cancelled']);
    });
  });

  describe('filter by dimension and name', () => {
    let owner: TestAccount;

    before(async () => {
      owner = await createAccount(t);
      await createKey(t, owner.token, { name: 'Report-Alpha', dimension: '部门' });
      await createKey(t, owner.token, { name: 'report-beta', dimension: '业务线' });
      await createKey(t, owner.token, { name: 'other', dimension: '成本中心' });
      await createKey(t, owner.token, { name: '100%-off', dimension: '部门' });
      await createKey(t, owner.token, { name: '100x-off', dimension: '部门' });
      await createKey(t, owner.token, { name: 'a_b', dimension: '业务线' });
      await createKey(t, owner.token, { name: 'axb', dimension: '业务线' });
      await createKey(t, owner.token, { name: 'back\\slash', dimension: '成本中心' });
      await createKey(t, owner.token, { name: 'backxslash', dimension: '成本中心' });
    });

    const DIMENSION_CASES: Record<string, string[]> = {
      部门: ['Report-Alpha', '100%-off', '100x-off'],
      业务线: ['report-beta', 'a_b', 'axb'],
      成本中心: ['other', 'back\\slash', 'backxslash'],
    };
    for (const [dimension, expected] of Object.entries(DIMENSION_CASES)) {
      it(`dimension=${dimension} → its ${expected.length} keys`, async () => {
        const page = await list(owner.token, `dimension=${encodeURIComponent(dimension)}`);
        expect(names(page)).to.have.members(expected);
        expect(page.total).to.equal(expected.length);
      });
    }

    const Q_CASES: Array<[string, string[]]> = [
      ['report', ['Report-Alpha', 'report-beta']],
      ['REPORT-A', ['Report-Alpha']],
      ['%', ['100%-off']],
      ['100%', ['100%-off']],
      ['_', ['a_b']],
      ['a_b', ['a_b']],
      ['\\', ['back\\slash']],
      ['off', ['100%-off', '100x-off']],
      ['nothing-like-this', []],
    ];
    for (const [q, expected] of Q_CASES) {
      it(`q=${q} → ${expected.length ? expected.join(', ') : 'nothing'} (name contains, case-insensitive, % _ \\ literal)`, async () => {
        const page = await list(owner.token, `q=${encodeURIComponent(q)}&page_size=100`);
        expect(names(page)).to.have.members(expected);
        expect(page.total).to.equal(expected.length);
      });
    }

    it('filters combine: q + dimension + status', async () => {
      expect(names(await list(owner.token, `q=off&dimension=${encodeURIComponent('部门')}`))).to.have.members(['100%-off', '100x-off']);
      expect(names(await list(owner.token, `q=report&dimension=${encodeURIComponent('业务线')}`))).to.deep.equal(['report-beta']);
      const [first] = (await list(owner.token, 'q=axb')).items;
      await api(t, 'POST', `/api/v1/keys/${first!.api_key_id}/suspend`, owner.token);
      expect(names(await list(owner.token, 'q=a&status=suspended'))).to.deep.equal(['axb']);
      expect(names(await list(owner.token, 'q=axb&status=active'))).to.deep.equal([]);
    });
  });

  describe('sorting', () => {
    let owner: TestAccount;
    // Creation order; used_tokens has a tie (charlie, echo).
    const CREATION = ['charlie', 'alpha', 'echo', 'bravo', 'delta'];
    const USED: Record<string, number> = { charlie: 50, alpha: 10, echo: 50, bravo: 0, delta: 30 };

    before(async () => {
      owner = await createAccount(t, { timezone: 'UTC' });
      const ids = await keysNamed(owner.token, CREATION);
      const { pool } = await testDatabase();
      const today = zoneToday('UTC');
      for (const [name, used] of Object.entries(USED)) await pool.query('update api_keys set used_tokens = $2 where id = $1', [ids[name], used]);
      await api(t, 'PUT', `/api/v1/keys/${ids.alpha}`, owner.token, { expires_at: addDays(today, 9) });
      await api(t, 'PUT', `/api/v1/keys/${ids.delta}`, owner.token, { expires_at: addDays(today, 2) });
      await pool.query(`update api_keys set last_used_at = now() - interval '1 hour' where id = $1`, [ids.bravo]);
      await pool.query(`update api_keys set last_used_at = now() - interval '2 hours' where id = $1`, [ids.echo]);
    });

    const CASES: Array<[string, string[]]> = [
      ['', ['delta', 'bravo', 'echo', 'alpha', 'charlie']],
      ['sort=created_at&order=desc', ['delta', 'bravo', 'echo', 'alpha', 'charlie']],
      ['sort=created_at', ['delta', 'bravo', 'echo', 'alpha', 'charlie']],
      ['sort=created_at&order=asc', CREATION],
      ['sort=name&order=asc', ['alpha', 'bravo', 'charlie', 'delta', 'echo']],
      ['sort=name&order=desc', ['echo', 'delta', 'charlie', 'bravo', 'alpha']],
      // Keys without an expiry or without use come last either way.
      ['sort=expires_at&order=asc', ['delta', 'alpha']],
      ['sort=expires_at&order=desc', ['alpha', 'delta']],
      ['sort=last_used_at&order=desc', ['bravo', 'echo']],
      ['sort=last_used_at&order=asc', ['echo', 'bravo']],
    ];
    for (const [query, expected] of CASES) {
      it(`${query || 'no sort given'} → ${expected.join(', ')}${expected.length < 5 ? ', then the rest' : ''}`, async () => {
        const got = names(await list(owner.token, query));
        expect(got.slice(0, expected.length)).to.deep.equal(expected);
        expect(got).to.have.members(CREATION);
      });
    }

    for (const order of ['asc', 'desc'] as const) {
      it(`sort=used_tokens&order=${order}: by tokens, ties kept in one stable order across pages`, async () => {
        const full = await list(owner.token, `sort=used_tokens&order=${order}&page_size=100`);
        const tokens = full.items.map((k) => k.used_tokens);
        expect(tokens).to.deep.equal([...tokens].sort((x, y) => (order === 'asc' ? x - y : y - x)));
        expect(full.items.map((k) => [k.name, k.used_tokens])).to.deep.include.members(Object.entries(USED));
        for (const size of [1, 2, 3]) {
          const paged: string[] = [];
          for (let page = 1; paged.length < 5 && page <= 5; page++) paged.push(...names(await list(owner.token, `sort=used_tokens&order=${order}&page_size=${size}&page=${page}`)));
          expect(paged, `page_size=${size}`).to.deep.equal(names(full));
        }
        expect(names(await list(owner.token, `sort=used_tokens&order=${order}`))).to.deep.equal(names(full));
      });
    }

    it('when every key ties, paging still visits each key exactly once', async () => {
      const same = await createAccount(t);
      const ids = Object.values(await keysNamed(same.token, ['t1', 't2', 't3', 't4', 't5', 't6', 't7']));
      const { pool } = await testDatabase();
      await pool.query('update api_keys set created_at = $2 where id = any($1)', [ids, new Date('2026-01-01T00:00:00Z')]);
      for (const sort of ['used_tokens', 'created_at', 'expires_at', 'last_used_at']) {
        for (const order of ['asc', 'desc']) {
          const seen: string[] = [];
          for (let page = 1; page <= 4; page++) seen.push(...names(await list(same.token, `sort=${sort}&order=${order}&page_size=2&page=${page}`)));
          expect(seen, `${sort} ${order}`).to.have.length(7);
          expect(new Set(seen).size, `${sort} ${order}`).to.equal(7);
        }
      }
    });
  });
});
