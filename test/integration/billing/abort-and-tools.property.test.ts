// Issue 27's property: whatever a key holder sends and however it hangs up,
// the month settles within the credit limit, and every call that reached an
// upstream is billed for input. Each run is a random sequence of calls on a
// small account: a form and an upstream (Anthropic, OpenAI chat, OpenAI
// Responses, the built-in mock), plain or streamed, with or without a hosted
// tool whose upstream reports a large input (as a web search does), and
// answered, cut before the upstream's first byte, or cut mid-stream. Calls
// are sequential because the fake upstreams take their scripted replies in
// arrival order: a reply must belong to the call it was scripted for.
import { expect } from 'chai';
import fc from 'fast-check';
import { setTimeout as delay } from 'node:timers/promises';
import { api, createAccount, createKey } from '../../support/app';
import { testDatabase } from '../../support/db';
import type { FakeReply } from '../../support/fake-upstreams';
import { micros } from './billing-support';
import { formBody, MODEL, PAIRS, post, prose, SLOW_MOCK, startBillingGateway, type BillingGateway, type Form, type Upstream } from './upstream-billing-support';

type Cut = 'none' | 'before_first_byte' | 'mid_stream';

interface Spec {
  pair: readonly [Form, Upstream];
  stream: boolean;
  cut: Cut;
  /** A hosted tool in the caller's form (network upstreams only: the mock reports what it reads). */
  tool: boolean;
  /** Input tokens the fake upstream reports (with a tool: what the tool's results add). */
  input: number;
  output: number;
  words: number;
}

/** A web search in each form's own shape. */
const WEB_SEARCH: Record<Form, Record<string, unknown>> = {
  messages: { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }] },
  chat: { web_search_options: { search_context_size: 'high' } },
  responses: { tools: [{ type: 'web_search' }], max_tool_calls: 1 },
};

/** Events each fake sends before its first text (see abort-billing.test.ts). */
const OPENING: Record<'anthropic' | 'openai' | 'responses', number> = { anthropic: 3, openai: 1, responses: 4 };
const CHUNKS = ['One ', 'two ', 'three ', 'four ', 'five ', 'six.'];

const spec: fc.Arbitrary<Spec> = fc
  .record({
    pair: fc.constantFrom(...PAIRS),
    stream: fc.boolean(),
    cut: fc.constantFrom<Cut>('none', 'none', 'before_first_byte', 'mid_stream'),
    tool: fc.boolean(),
    input: fc.integer({ min: 1, max: 4_000 }),
    toolInput: fc.integer({ min: 20_000, max: 150_000 }),
    output: fc.integer({ min: 1, max: 256 }),
    words: fc.integer({ min: 5, max: 400 }),
  })
  .map(({ toolInput, ...s }) => {
    const tool = s.tool && s.pair[1] !== 'mock';
    // A cut mid-stream needs a stream.
    const cut: Cut = s.cut === 'mid_stream' && !s.stream ? 'before_first_byte' : s.cut;
    return { ...s, tool, cut, input: tool ? toolInput : s.input };
  });

interface Outcome {
  status: number | 'aborted';
  requestId: string | null;
}

describe('billing property: random aborts and hosted tools never pass the limit, and every upstream call bills input', function () {
  this.timeout(600_000);
  let g: BillingGateway;
  let serial = 0;

  before(async () => {
    g = await startBillingGateway();
  });
  after(async () => g?.close());

  /** One call as `s` says; resolves once the gateway answered or the client hung up. */
  async function run(secret: string, s: Spec): Promise<Outcome> {
    const [form, upstream] = s.pair;
    const prompt = prose(`Property call ${++serial}:`, s.words);
    const fake = upstream === 'mock' ? undefined : g.fakes[upstream];
    const reply: FakeReply = { chunks: CHUNKS, usage: { input: s.input, output: s.output } };
    if (s.cut === 'before_first_byte') fake?.script({ hang: true });
    else if (s.cut === 'mid_stream') fake?.script({ ...reply, hangAfterEvents: OPENING[upstream as 'anthropic'] + 2 });
    else fake?.script(reply);
    const model = upstream === 'mock' && s.cut === 'before_first_byte' ? SLOW_MOCK : MODEL[upstream];
    const body = formBody(form, model, prompt, s.stream, s.tool ? WEB_SEARCH[form] : {});
    const controller = new AbortController();
    const asked = fake?.requests.length ?? 0;
    // A call that never ends fails the run instead of hanging it.
    const pending = post(g, form, secret, body, AbortSignal.any([controller.signal, AbortSignal.timeout(60_000)]));

    if (s.cut === 'before_first_byte') {
      // Hang up once the upstream has the request (or the gateway answered first: a refusal).
      const answered = pending.then(
        (response) => response,
        () => undefined,
      );
      const deadline = Date.now() + 30_000;
      let response: Response | undefined;
      while (Date.now() < deadline) {
        response = await Promise.race([answered, delay(20).then(() => undefined)]);
        if (response) break;
        if (fake ? fake.requests.length > asked : Date.now() > deadline - 29_500) break;
      }
      if (response) {
        // Refused before any upstream call: its scripted reply must not go to the next call.
        await response.text();
        fake?.unscript();
        return outcomeOf(response);
      }
      controller.abort();
      await answered;
      return { status: 'aborted', requestId: null };
    }

    const response = await pending;
    if (response.status !== 200 || s.cut === 'none') {
      await response.text();
      if (fake && response.status !== 200) fake.unscript();
      return outcomeOf(response);
    }
    // Mid-stream: read until some text has come, then hang up.
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!/One|text_delta|output_text\.delta|"content":"[^"]/.test(text)) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);
    return { status: 'aborted', requestId: response.headers.get('request-id') };
  }

  function outcomeOf(response: Response): Outcome {
    return { status: response.status, requestId: response.headers.get('request-id') };
  }

  it('settled ≤ limit; usage detail = month-to-date; input > 0 on every record whose request reached an upstream', async () => {
    const db = await testDatabase();
    const seen = { calls: 0, answered: 0, aborted: 0, refused: 0, toolCalls: 0, estimated: 0, maxShare: 0 };
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 150_000, max: 1_500_000 }), fc.array(spec, { minLength: 3, maxLength: 9 }), async (limit, specs) => {
        const owner = await createAccount(g.t, { timezone: 'UTC', creditLimitMicros: limit });
        const key = await createKey(g.t, owner.token, { model_scope: [...Object.values(MODEL), SLOW_MOCK] });
        const outcomes: Outcome[] = [];
        for (const s of specs) {
          outcomes.push(await run(key.api_key, s));
          // A reply the call did not take (it was refused, or cut before its request arrived) must not go to the next.
          for (const fake of Object.values(g.fakes)) fake.unscript();
        }
        seen.calls += specs.length;
        seen.toolCalls += specs.filter((s) => s.tool).length;
        for (const o of outcomes) {
          if (o.status === 'aborted') seen.aborted++;
          else if (o.status >= 400 && o.status < 500) seen.refused++;
          else seen.answered++;
        }

        // Every call the gateway took on has one record; refusals before any upstream (429 at the limit,
        // 400 for a tool the upstream's protocol cannot carry) have none.
        const taken = outcomes.filter((o) => o.status === 'aborted' || o.status < 400 || o.status >= 500).length;
        let records: Array<{ status: string; error_code: string | null; provider: string | null; estimated: boolean; tokens_input_cache_hit: string; tokens_input_cache_miss: string }> = [];
        for (let attempt = 0; attempt < 400; attempt++) {
          records = (await db.pool.query('select * from usage_records where api_key_id = $1', [key.api_key_id])).rows;
          if (records.length >= taken) break;
          await delay(25);
        }
        expect(records.length, JSON.stringify(outcomes)).to.equal(taken);

        const credit = (await api(g.t, 'GET', '/api/v1/account/credit', owner.token)).body;
        const used = micros(credit.month_used);
        expect(used <= BigInt(limit), `settled ${used} past the limit ${limit}`).to.equal(true);
        const settled = (await db.pool.query<{ sum: string | null }>('select sum(amount_micros)::text as sum from usage_records where account_id = $1', [owner.accountId])).rows[0]!.sum;
        expect(BigInt(settled ?? '0')).to.equal(used);
        seen.estimated += records.filter((r) => r.estimated).length;
        seen.maxShare = Math.max(seen.maxShare, Number(used) / limit);

        for (const r of records) {
          // The upstream was asked (a provider was chosen and the request went out): its prompt is billed.
          if (r.provider === null || r.error_code === 'aborted_before_upstream' || r.status === 'upstream_error') continue;
          const input = Number(r.tokens_input_cache_hit) + Number(r.tokens_input_cache_miss);
          expect(input, `a ${r.status} record of ${r.provider} bills no input`).to.be.greaterThan(0);
        }
      }),
      // A failure is reported as found: shrinking replays whole call sequences and would outlast the timeout.
      { numRuns: 6, endOnFailure: true },
    );
    process.stdout.write(
      `      ${seen.calls} calls (${seen.toolCalls} with a web search): ${seen.answered} answered, ${seen.aborted} cut, ${seen.refused} refused; ${seen.estimated} estimated records; at most ${(seen.maxShare * 100).toFixed(1)} % of a limit settled\n`,
    );
  });
});
