// docs/architecture.md §7: GET /api/v1/usage/export is the usage detail as text/csv, one row
// per call, streamed (no whole-month buffering). ~20k rows are seeded with SQL
// (microsecond timestamps, pairs sharing one) next to a few real calls.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import { CSV_HEADER } from '../../../src/metering/usage-query.service';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { allUsageItems, dataCall, micros, PRICE_TIERS, pool, shiftDay, USAGE_RECORD_COLUMNS, zoneDay } from './billing-support';

const SEEDED = 20_000;

/** Minimal RFC 4180 line parser (quoted cells, doubled quotes). */
function parseCsvLine(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  return cells;
}

interface Export {
  status: number;
  headers: Headers;
  header: string[];
  rows: Record<string, string>[];
  chunks: number;
  firstChunkAt: number;
}

describe('billing: CSV export of the usage detail', function () {
  this.timeout(90_000);
  let t: TestApp;
  let owner: TestAccount;
  let keyA: string;
  let keyB: string;
  const today = zoneDay('Asia/Shanghai');
  const start = shiftDay(today, -1);
  const end = shiftDay(today, 1);

  before(async () => {
    t = await startTestApp();
    owner = await createAccount(t, { timezone: 'Asia/Shanghai' });
    const a = await createKey(t, owner.token);
    const b = await createKey(t, owner.token);
    keyA = a.api_key_id;
    keyB = b.api_key_id;
    // A few real calls, so the export covers what the pipeline writes too.
    for (const [secret, form] of [[a.api_key, 'messages'], [b.api_key, 'chat'], [a.api_key, 'chat']] as const) {
      expect((await dataCall(t, secret, { form, stream: form === 'chat', thinking: false, turns: ['Say hi, "CSV", please'] })).status).to.equal(200);
    }
    const tag = randomBytes(4).toString('hex');
    const db = await pool();
    // Two of every three rows on key A; pairs of rows share one microsecond timestamp.
    await db.query(
      `insert into usage_records (${USAGE_RECORD_COLUMNS})
       select 'use_' || $4 || lpad(g::text, 6, '0'), 'req_' || $4 || lpad(g::text, 6, '0'), $1, case when g % 3 = 0 then $3 else $2 end,
         case when g % 2 = 0 then 'messages' else 'chat_completions' end, 'tsxt-general', 'sim-medium', 'sim', 'standard', 0.5,
         '[]', g % 5 = 0, g % 2 = 1, 'ok', null, case when g % 5 = 0 then 'thinking' else 'no_thinking' end, hit, miss, out,
         hit, miss, out, hit * 1, miss * 2 + 1, out * 8, hit + miss + out, hit * 1 + miss * 2 + 1 + out * 8, '{}', 20, 10,
         now() - interval '1 minute' - (g / 2) * interval '7037 microseconds'
       from generate_series(1, $5::int) as g, lateral (select g % 50 as hit, 100 + g % 17 as miss, 20 + g % 13 as out) as v`,
      [owner.accountId, keyA, keyB, tag, SEEDED],
    );
  });
  after(async () => t.close());

  async function exportCsv(query: Record<string, string>): Promise<Export> {
    const started = performance.now();
    const response = await fetch(`${t.baseUrl}/api/v1/usage/export?${new URLSearchParams(query)}`, {
      headers: { authorization: `Bearer ${owner.token}` },
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let chunks = 0;
    let firstChunkAt = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (chunks === 0) firstChunkAt = performance.now() - started;
      chunks++;
      text += decoder.decode(value, { stream: true });
    }
    text += decoder.decode();
    const lines = text.split('\n');
    expect(lines.pop(), 'the file ends with a newline').to.equal('');
    const header = parseCsvLine(lines.shift()!);
    const rows = lines.map((line) => Object.fromEntries(parseCsvLine(line).map((cell, i) => [header[i]!, cell])));
    return { status: response.status, headers: response.headers, header, rows, chunks, firstChunkAt };
  }

  function sums(rows: Record<string, string>[]) {
    return {
      count: rows.length,
      tokens: rows.reduce((n, r) => n + Number(r.total_tokens), 0),
      micros: rows.reduce((n, r) => n + micros(r.amount!), 0n),
    };
  }

  it('has the CSV_HEADER columns, and its rows and sums equal the usage detail, row by row', async () => {
    const csv = await exportCsv({ start, end });
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).to.equal('attachment; filename="usage.csv"');
    expect(csv.header).to.deep.equal(CSV_HEADER);

    const detail = await allUsageItems(t, owner.token, start, end);
    expect(detail.first.total).to.equal(SEEDED + 3);
    const s = sums(csv.rows);
    expect(s.count).to.equal(detail.first.total);
    expect(s.tokens).to.equal(detail.first.total_tokens);
    expect(s.micros).to.equal(micros(detail.first.total_amount));

    // Every call exactly once (no row lost or repeated between batches), with the detail's numbers.
    const byRequest = new Map(csv.rows.map((r) => [r.request_id!, r]));
    expect(byRequest.size, 'distinct request ids').to.equal(csv.rows.length);
    for (const item of detail.items) {
      const row = byRequest.get(item.request_id);
      expect(row, item.request_id).to.not.equal(undefined);
      expect(row!.api_key_id).to.equal(item.api_key_id);
      expect(row!.amount).to.equal(item.amount);
      expect(Number(row!.total_tokens)).to.equal(item.total_tokens);
      for (const tier of PRICE_TIERS) expect(Number(row![tier])).to.equal(item.tiers[tier]);
      expect(row!.created_at).to.equal(item.created_at);
    }
    // Oldest first.
    const times = csv.rows.map((r) => r.created_at!);
    expect([...times].sort()).to.deep.equal(times);
  });

  it('filters by api_key_id', async () => {
    for (const keyId of [keyA, keyB]) {
      const csv = await exportCsv({ start, end, api_key_id: keyId });
      const detail = (await api(t, 'GET', `/api/v1/usage?${new URLSearchParams({ start, end, api_key_id: keyId, page_size: '1' })}`, owner.token)).body;
      expect(csv.rows.every((r) => r.api_key_id === keyId)).to.equal(true);
      const s = sums(csv.rows);
      expect(s.count).to.equal(detail.total);
      expect(s.tokens).to.equal(detail.total_tokens);
      expect(s.micros).to.equal(micros(detail.total_amount));
    }
  });

  it('is streamed: the first bytes arrive while later batches are still being read from the database', async () => {
    const usage = t.app.services.usage;
    const original = usage.exportRows.bind(usage);
    const batchAt: number[] = [];
    let requestStarted = 0;
    usage.exportRows = async function* (...args: Parameters<typeof original>) {
      for await (const batch of original(...args)) {
        batchAt.push(performance.now() - requestStarted);
        yield batch;
      }
    };
    try {
      requestStarted = performance.now();
      const csv = await exportCsv({ start, end });
      expect(csv.rows).to.have.length(SEEDED + 3);
      expect(csv.headers.get('content-length'), 'no length known up front').to.equal(null);
      expect(csv.headers.get('transfer-encoding')).to.equal('chunked');
      expect(csv.chunks, 'chunks received').to.be.greaterThan(5);
      expect(batchAt.length, 'database batches').to.be.greaterThan(5);
      // A buffered export would only start after the last batch was read.
      expect(csv.firstChunkAt, `first chunk at ${csv.firstChunkAt.toFixed(1)} ms, last batch at ${batchAt.at(-1)!.toFixed(1)} ms`).to.be.lessThan(batchAt.at(-1)!);
    } finally {
      delete (usage as Partial<typeof usage>).exportRows;
    }
  });

  it('refuses a bad range with 400 before streaming', async () => {
    const response = await fetch(`${t.baseUrl}/api/v1/usage/export?start=2026-02-30`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(response.status).to.equal(400);
    expect(response.headers.get('content-type')).to.match(/json/);
  });
});
