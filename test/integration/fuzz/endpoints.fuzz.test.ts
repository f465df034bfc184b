// Every endpoint of both contracts, fed schema-aware random requests: valid
// bodies, near-valid ones (one to three spots broken), arbitrary JSON,
// malformed JSON text and wrong content types, odd query and path values.
// The properties hold for every request:
// - never a 5xx;
// - every 4xx carries the error envelope documented for its surface
//   (Anthropic on /v1/messages*, OpenAI on /v1/chat/completions and
//   /v1/responses, either on
//   /v1/models by `anthropic-version`, REST `{error:{code,message}}` on /api/v1);
// - a 2xx only for a request the contract accepts.
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import fc from 'fast-check';
import { loadContract, type OpenApiContract } from '../../../src/http/openapi-router';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { catalogJson, mockProvider } from '../../support/mock-catalog';
import { ContractArbitraries, ODD_STRINGS, calendarDate, serialize, type Json } from './schema-arbitrary';

const DATA_PLANE = fileURLToPath(new URL('../../../openapi/messages.yaml', import.meta.url));
const CONTROL_PLANE = fileURLToPath(new URL('../../../openapi/control.yaml', import.meta.url));
const RUNS = 200;
const CONCURRENCY = 6;
const MODELS = ['fuzz-a', 'fuzz-b'];
const ANTHROPIC_ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
];

type Surface = 'anthropic' | 'openai' | 'rest';

interface FuzzRequest {
  method: string;
  path: string;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  body?: string;
  /** What kind of body this is, for the report. */
  kind: string;
}

interface Operation {
  id: string;
  method: string;
  /** Template, e.g. /api/v1/keys/{api_key_id}. */
  path: string;
  parameters: Array<Record<string, any>>;
  bodySchema: Record<string, any> | undefined;
}

function operations(contract: ContractArbitraries): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(contract.doc.paths as Record<string, Record<string, any>>)) {
    const shared = (item.parameters ?? []).map((p: any) => contract.resolve(p));
    for (const method of ['get', 'post', 'put', 'delete', 'patch']) {
      const op = item[method];
      if (!op) continue;
      const body = op.requestBody ? contract.resolve(op.requestBody) : undefined;
      out.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        parameters: [...shared, ...(op.parameters ?? []).map((p: any) => contract.resolve(p))],
        bodySchema: body?.content?.['application/json']?.schema,
      });
    }
  }
  return out;
}

const oddValue = fc.oneof(
  fc.constantFrom(...ODD_STRINGS.filter((s) => s.length < 500)),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.integer().map(String),
  fc.double().map(String),
);

/** A query or path value: usually what the schema asks for, often not. */
function paramValue(contract: ContractArbitraries, param: Record<string, any>, bias?: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const fromSchema = contract.valid(param.schema ?? {}).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return bias ? fc.oneof({ arbitrary: bias, weight: 3 }, { arbitrary: fromSchema, weight: 2 }, oddValue) : fc.oneof({ arbitrary: fromSchema, weight: 3 }, oddValue);
}

/** Every UTF-8 byte percent-encoded (lone surrogates, which encodeURIComponent refuses, become U+FFFD). */
const percentEncode = (value: string): string => [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

const JSON_TYPE = 'application/json';
const WRONG_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=zz', 'application/xml', 'application/jsonx'];

function bodyArbitrary(contract: ContractArbitraries, schema: Record<string, any>): fc.Arbitrary<{ body: string; contentType: string; kind: string }> {
  const json = (kind: string, arb: fc.Arbitrary<Json>) => arb.map((v) => ({ body: serialize(v), contentType: JSON_TYPE, kind }));
  return fc.oneof(
    { arbitrary: json('valid', contract.valid(schema)), weight: 3 },
    { arbitrary: json('near-valid', contract.nearValid(schema)), weight: 8 },
    { arbitrary: json('any json', fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>), weight: 1 },
    {
      arbitrary: fc.oneof(
        contract.valid(schema).chain((v) => {
          const text = serialize(v);
          return fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut));
        }),
        fc.constantFrom('{', '{"model":', '{"model": "fuzz-a",}', '\ufeff{}', 'null', '[]', '"text"', '{"a":1}{"b":2}', '\u0000', 'NaN', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'),
        fc.string({ unit: 'binary', maxLength: 60 }),
      ).map((body) => ({ body, contentType: JSON_TYPE, kind: 'malformed json' })),
      weight: 2,
    },
    {
      arbitrary: fc.tuple(contract.valid(schema), fc.constantFrom(...WRONG_TYPES)).map(([v, contentType]) => ({ body: serialize(v), contentType, kind: 'wrong content type' })),
      weight: 1,
    },
  );
}

interface Setup {
  surface: (path: string, headers: Record<string, string>) => Surface;
  auth: fc.Arbitrary<Record<string, string>>;
  pathBias: Record<string, fc.Arbitrary<string>>;
  queryBias: Record<string, fc.Arbitrary<string>>;
}

function requestArbitrary(contract: ContractArbitraries, op: Operation, setup: Setup): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  // An empty path parameter makes another route's path (`/v1/models/` is the list): not this operation's input.
  const nonEmpty = (p: Record<string, any>) => paramValue(contract, p, setup.pathBias[p.name]).map((v) => (v === '' ? ' ' : v));
  const path = fc.tuple(...pathParams.map(nonEmpty)).map((values) =>
    pathParams.reduce((acc, p, i) => acc.replace(`{${p.name}}`, percentEncode(values[i]!)), op.path),
  );
  const query = fc
    .tuple(
      ...queryParams.map((p) =>
        // Mostly one value; sometimes the parameter repeated (an array where a scalar belongs).
        fc.option(fc.oneof({ arbitrary: paramValue(contract, p, setup.queryBias[p.name]).map((v) => [v]), weight: 6 }, fc.array(paramValue(contract, p), { minLength: 2, maxLength: 2 })), { nil: undefined, freq: 3 }).map((values) =>
          (values ?? []).map((v): [string, string] => [p.name as string, v]),
        ),
      ),
      // Now and then a parameter the contract does not know.
      fc.oneof({ arbitrary: fc.constant(undefined), weight: 7 }, fc.tuple(fc.string({ maxLength: 8 }), oddValue)),
    )
    .map((parts) => {
      const extra = parts.pop() as [string, string] | undefined;
      const pairs = (parts as Array<Array<[string, string]>>).flat();
      return extra ? [...pairs, extra] : pairs;
    });
  const anthropicVersion = fc.option(fc.constantFrom('2023-06-01', '2026-10-21', ''), { nil: undefined });
  const body = op.bodySchema ? fc.option(bodyArbitrary(contract, op.bodySchema), { nil: undefined, freq: 12 }) : fc.constant(undefined);
  return fc.record({ path, query, auth: setup.auth, anthropicVersion, body }).map(({ path: p, query: q, auth, anthropicVersion: version, body: b }) => {
    const headers: Record<string, string> = { ...auth };
    if (version !== undefined) headers['anthropic-version'] = version;
    if (b) headers['content-type'] = b.contentType;
    return {
      method: op.method,
      path: p,
      query: q,
      headers,
      ...(b ? { body: b.body } : {}),
      kind: b ? b.kind : op.bodySchema ? 'no body' : 'params',
    };
  });
}

interface Finding {
  operation: string;
  problem: string;
  request: string;
}

function describeRequest(r: FuzzRequest): string {
  const query = r.query.length ? `?${new URLSearchParams(r.query).toString()}` : '';
  const body = r.body === undefined ? '' : ` ${r.headers['content-type']} ${r.body.length > 300 ? `${r.body.slice(0, 300)}… (${r.body.length} chars)` : r.body}`;
  return `${r.method} ${r.path}${query} [${r.kind}]${body}`.slice(0, 700);
}

function envelopeProblem(surface: Surface, body: any, requestId: string | null): string | undefined {
  const isString = (v: unknown) => typeof v === 'string';
  if (surface === 'anthropic') {
    if (body?.type !== 'error' || !isString(body?.error?.message) || !ANTHROPIC_ERROR_TYPES.includes(body?.error?.type)) return 'not the Anthropic error envelope';
    if (body.request_id !== requestId) return 'request_id differs from the request-id header';
    return undefined;
  }
  if (surface === 'openai') {
    const e = body?.error;
    if (!isString(e?.message) || !isString(e?.type) || !('param' in e) || !('code' in e)) return 'not the OpenAI error envelope';
    if (!(e.param === null || isString(e.param)) || !(e.code === null || isString(e.code))) return 'OpenAI param/code not string|null';
    return undefined;
  }
  const e = body?.error;
  if (!isString(e?.code) || !isString(e?.message)) return 'not the REST error envelope';
  if (e.field !== undefined && !isString(e.field)) return 'REST field not a string';
  return undefined;
}

/** Whether the contract accepts the request (body parsed as the server would). */
function acceptedByContract(contract: OpenApiContract, op: Operation, r: FuzzRequest): boolean {
  let body: unknown;
  if (r.body !== undefined) {
    if (!/^application\/json(\s*;|$)/.test(r.headers['content-type'] ?? '')) return false;
    try {
      // The gateway's parser (secure-json-parse) skips a leading byte-order mark, as RFC 8259 lets a parser do.
      body = JSON.parse(r.body.replace(/^\uFEFF/, ''));
    } catch {
      return false;
    }
  } else if (op.bodySchema) {
    return false;
  }
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of r.query) query[k] = k in query ? ([] as string[]).concat(query[k]!, v) : v;
  const result = contract.api.validateRequest({ method: r.method, path: r.path, headers: r.headers, query, body }, op.id);
  return result.valid;
}

async function send(base: string, r: FuzzRequest): Promise<{ status: number; requestId: string | null; contentType: string; body: any }> {
  const query = r.query.length ? `?${new URLSearchParams(r.query).toString()}` : '';
  const response = await fetch(`${base}${r.path}${query}`, { method: r.method, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // SSE, CSV or empty
  }
  return { status: response.status, requestId: response.headers.get('request-id'), contentType: response.headers.get('content-type') ?? '', body };
}

describe('fuzz: every endpoint keeps its contract under random input', function () {
  this.timeout(180_000);
  let t: TestApp;
  let dataContract: OpenApiContract;
  let controlContract: OpenApiContract;
  let apiKey: string;
  let session: string;
  const controlKeyIds: string[] = [];
  const findings: Finding[] = [];
  const counts = new Map<string, Map<number, number>>();
  const elapsed = new Map<string, number>();

  before(async () => {
    t = await startTestApp({
      catalog: catalogJson({ sim: mockProvider() }, { 'fuzz-a': [{ provider: 'sim', model: 'sim-a' }], 'fuzz-b': [{ provider: 'sim', model: 'sim-b' }] }),
    });
    dataContract = await loadContract(DATA_PLANE);
    controlContract = await loadContract(CONTROL_PLANE);
    // The data-plane key lives in an account of its own, out of reach of the control-plane fuzzing.
    const dataAccount = await createAccount(t);
    apiKey = (await createKey(t, dataAccount.token, { model_scope: ['fuzz-a'] })).api_key;
    const controlAccount = await createAccount(t);
    session = controlAccount.token;
    for (let i = 0; i < 3; i++) controlKeyIds.push((await createKey(t, session, { model_scope: ['fuzz-a'] })).api_key_id);
  });

  after(async () => {
    await t?.close();
  });

  /**
   * RUNS requests drawn from the operation's arbitrary (seeded, so a finding
   * can be replayed), sent a few at a time: concurrent requests also meet
   * each other in the services (same names, same keys).
   */
  async function fuzz(contract: ContractArbitraries, validator: OpenApiContract, op: Operation, setup: Setup): Promise<void> {
    const seed = Date.now() ^ op.id.length;
    const started = Date.now();
    const requests = fc.sample(requestArbitrary(contract, op, setup), { numRuns: RUNS, seed });
    const tally = counts.get(op.id) ?? new Map<number, number>();
    counts.set(op.id, tally);
    let next = 0;
    const worker = async () => {
      for (let r = requests[next++]; r; r = requests[next++]) {
        const response = await send(t.baseUrl, r);
        tally.set(response.status, (tally.get(response.status) ?? 0) + 1);
        const problem = (() => {
          if (response.status >= 500) return `HTTP ${response.status}: ${JSON.stringify(response.body).slice(0, 200)}`;
          if (response.status >= 400) {
            if (!response.contentType.startsWith('application/json')) return `HTTP ${response.status} with content-type ${response.contentType}`;
            const envelope = envelopeProblem(setup.surface(r.path, r.headers), response.body, response.requestId);
            return envelope && `HTTP ${response.status}: ${envelope}: ${JSON.stringify(response.body).slice(0, 200)}`;
          }
          if (response.status >= 200 && response.status < 300 && !acceptedByContract(validator, op, r)) return `HTTP ${response.status} for a request the contract refuses`;
          return undefined;
        })();
        if (problem) findings.push({ operation: `${op.id} (seed ${seed})`, problem, request: describeRequest(r) });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    elapsed.set(op.id, Date.now() - started);
  }

  it('data plane: messages, count_tokens, chat completions, models', async () => {
    const contract = new ContractArbitraries(DATA_PLANE, (name) =>
      name === 'model' ? fc.oneof({ arbitrary: fc.constant('fuzz-a'), weight: 6 }, fc.constantFrom('fuzz-b', 'no-such-model')) : undefined,
    );
    const auth = fc.oneof(
      { arbitrary: fc.constant({ authorization: `Bearer ${apiKey}` }), weight: 10 },
      { arbitrary: fc.constant({ 'x-api-key': apiKey }), weight: 10 },
      fc.constant({}),
      fc.constant({ authorization: 'Bearer tsxt-invalid' }),
    );
    const setup: Setup = {
      surface: (path, headers) => (path.startsWith('/v1/chat/') || path.startsWith('/v1/responses') || path.startsWith('/v1/conversations') ? 'openai' : path.startsWith('/v1/models') ? (headers['anthropic-version'] ? 'anthropic' : 'openai') : 'anthropic'),
      auth,
      pathBias: { model_id: fc.constantFrom(...MODELS, 'no-such-model') },
      queryBias: { after_id: fc.constantFrom(...MODELS), before_id: fc.constantFrom(...MODELS) },
    };
    for (const op of operations(contract)) await fuzz(contract, dataContract, op, setup);
  });

  it('control plane: every REST operation', async () => {
    const contract = new ContractArbitraries(CONTROL_PLANE, (name) => {
      if (name === 'model_scope') return fc.array(fc.constantFrom(...MODELS, 'no-such-model'), { minLength: 1, maxLength: 2 });
      if (name === 'expires_at') return fc.oneof(calendarDate(), fc.constant(null));
      return undefined;
    });
    const ids = () => fc.constantFrom(...controlKeyIds);
    for (const op of operations(contract)) {
      // Signing out would end the session the rest of the run uses: that one only sees strangers' tokens.
      const auth =
        op.id === 'deleteCurrentSession'
          ? fc.constantFrom({}, { authorization: 'Bearer tsxs_not_a_session' }, { authorization: 'Basic abc' })
          : fc.oneof({ arbitrary: fc.constant({ authorization: `Bearer ${session}` }), weight: 12 }, fc.constant({}), fc.constant({ authorization: 'Bearer tsxs_wrong' }));
      await fuzz(contract, controlContract, op, {
        surface: () => 'rest',
        auth,
        pathBias: { api_key_id: ids(), month: fc.integer({ min: -14, max: 2 }).map((m) => new Date(Date.UTC(2026, 10 + m, 1)).toISOString().slice(0, 7)) },
        queryBias: { api_key_id: ids(), start: calendarDate(), end: calendarDate() },
      });
    }
  });

  it('bodies over the size limit and raw oddities answer 4xx in the right envelope', async () => {
    const big = JSON.stringify({ model: 'fuzz-a', max_tokens: 5, messages: [{ role: 'user', content: 'x'.repeat(21 * 1024 * 1024) }] });
    const cases: Array<[Surface, FuzzRequest]> = [
      ['anthropic', { method: 'POST', path: '/v1/messages', query: [], headers: { 'x-api-key': apiKey, 'content-type': JSON_TYPE }, body: big, kind: 'too large' }],
      ['openai', { method: 'POST', path: '/v1/chat/completions', query: [], headers: { authorization: `Bearer ${apiKey}`, 'content-type': JSON_TYPE }, body: big, kind: 'too large' }],
      ['rest', { method: 'POST', path: '/api/v1/keys', query: [], headers: { authorization: `Bearer ${session}`, 'content-type': JSON_TYPE }, body: big, kind: 'too large' }],
      ['anthropic', { method: 'POST', path: '/v1/messages', query: [], headers: { 'x-api-key': apiKey, 'content-type': JSON_TYPE }, body: '', kind: 'empty' }],
      ['openai', { method: 'POST', path: '/v1/chat/completions', query: [], headers: { authorization: `Bearer ${apiKey}` }, kind: 'no body' }],
      ['rest', { method: 'PUT', path: '/api/v1/keys/x', query: [], headers: { authorization: `Bearer ${session}`, 'content-type': JSON_TYPE }, body: '{"name":', kind: 'truncated' }],
      ['anthropic', { method: 'GET', path: '/v1/messages', query: [], headers: { 'x-api-key': apiKey }, kind: 'wrong method' }],
      ['rest', { method: 'GET', path: '/api/v1/nope', query: [], headers: { authorization: `Bearer ${session}` }, kind: 'unknown route' }],
      ['openai', { method: 'GET', path: '/v1/models/%E0%A4%A', query: [], headers: { authorization: `Bearer ${apiKey}` }, kind: 'bad percent-encoding' }],
      ['anthropic', { method: 'GET', path: `/v1/models/${'m'.repeat(5_000)}`, query: [], headers: { authorization: `Bearer ${apiKey}`, 'anthropic-version': '2023-06-01' }, kind: 'long path parameter' }],
      ['rest', { method: 'GET', path: '/api/v1/keys/%ZZ', query: [], headers: { authorization: `Bearer ${session}` }, kind: 'bad percent-encoding' }],
    ];
    for (const [surface, r] of cases) {
      const response = await send(t.baseUrl, r);
      expect(response.status, describeRequest(r)).to.be.within(400, 499);
      expect(envelopeProblem(surface, response.body, response.requestId), `${describeRequest(r)} → ${JSON.stringify(response.body)}`).to.equal(undefined);
    }
  });

  after(() => {
    const lines = [...counts].map(
      ([op, tally]) => `${op} (${elapsed.get(op) ?? 0} ms) ${[...tally].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`,
    );
    process.stdout.write(`      statuses per operation:\n${lines.map((l) => `        ${l}`).join('\n')}\n`);
  });

  it('found no 5xx, no wrong envelope and no 2xx for refused input', () => {
    const distinct = new Map<string, Finding>();
    for (const f of findings) distinct.set(`${f.operation} ${f.problem.slice(0, 80)}`, f);
    const report = [...distinct.values()].map((f) => `${f.operation}: ${f.problem}\n    ${f.request}`).join('\n');
    expect(findings.length, `${findings.length} findings, ${distinct.size} distinct:\n${report}`).to.equal(0);
  });
});
