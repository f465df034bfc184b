// Complexity routing through the real app (docs/architecture.md §5): the tier picks the
// deployment, `x-route` explains the choice and the usage record keeps it;
// an explicit thinking request goes to the thinking tier and bills thinking
// prices.
import { expect } from 'chai';
import { HARNESSES, harnessBody, harnessCapture, loadCorpus, type CorpusItem, type HarnessForm } from '../../../scripts/routing-corpus';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { answerUsage, call, catalogFile, requestBody, usageRecord, type Form } from '../../support/data-plane';
import { startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '../../support/fake-upstreams';


/** `tier=heavy; score=0.71; reasons=code,long; model=…` → its parts. */
function parseRoute(header: string | null): { tier: string; score: number; reasons: string[]; model: string } {
  const fields = Object.fromEntries((header ?? '').split('; ').map((part) => part.split('=') as [string, string]));
  return {
    tier: fields.tier ?? '',
    score: Number(fields.score),
    reasons: fields.reasons === 'none' ? [] : (fields.reasons ?? '').split(','),
    model: fields.model ?? '',
  };
}

describe('routing: complexity tiers, x-route and thinking prices', function () {
  this.timeout(30_000);
  let t: TestApp;
  let anthropic: FakeUpstream;
  let openai: FakeUpstream;
  let apiKey: string;
  let cases: CorpusItem[];

  before(async () => {
    [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAI()]);
    cases = loadCorpus();
    t = await startTestApp({
      env: { RT_ANTHROPIC_KEY: 'sk-ant-rt', RT_OPENAI_KEY: 'sk-openai-rt' },
      catalog: catalogFile({
        providers: {
          claude: { type: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'RT_ANTHROPIC_KEY' },
          gpt: { type: 'openai', base_url: openai.baseUrl, api_key_env: 'RT_OPENAI_KEY' },
        },
        models: [
          {
            // Every tier on the Anthropic fake: Claude Code's body passes through, Codex's and LangChain's are translated.
            name: 'm-agents',
            routes: {
              light: [{ provider: 'claude', model: 'claude-light' }],
              standard: [{ provider: 'claude', model: 'claude-standard' }],
              heavy: [{ provider: 'claude', model: 'claude-heavy' }],
              thinking: [{ provider: 'claude', model: 'claude-thinking', thinking: true }],
            },
          },
          {
            name: 'm-tiers',
            routes: {
              light: [{ provider: 'gpt', model: 'gpt-light' }],
              standard: [{ provider: 'gpt', model: 'gpt-standard' }],
              heavy: [{ provider: 'claude', model: 'claude-heavy' }],
              thinking: [{ provider: 'claude', model: 'claude-thinking', thinking: true }],
            },
          },
        ],
      }),
    });
    const owner = await createAccount(t);
    apiKey = (await createKey(t, owner.token, { model_scope: ['m-tiers', 'm-agents'] })).api_key;
  });

  after(async () => {
    await t?.close();
    await anthropic?.close();
    await openai?.close();
  });

  const prompt = (id: string) => cases.find((c) => c.id === id)!.prompt;

  for (const form of ['messages', 'chat'] as const satisfies readonly Form[]) {
    for (const [id, tier, model] of [
      ['light-en-01', 'light', 'gpt-light'],
      ['heavy-en-01', 'heavy', 'claude-heavy'],
    ] as const) {
      it(`${form}: a ${tier} prompt goes to the ${tier} deployment; x-route and the usage record say why`, async () => {
        const response = await call(t, form, apiKey, requestBody(form, 'm-tiers', prompt(id)));
        expect(response.status, response.raw).to.equal(200);
        const route = parseRoute(response.headers.get('x-route'));
        expect(route).to.include({ tier, model });
        if (tier === 'light') expect(route.reasons).to.include('trivial');
        else expect(route.reasons).to.include('code');
        const record = await usageRecord(response.requestId);
        expect(record).to.include({ route_tier: tier, routed_model: model, thinking: false, price_tier: 'no_thinking' });
        expect(record.route_score).to.be.closeTo(route.score, 0.005);
        expect(record.route_reasons).to.deep.equal(route.reasons);
        expect(answerUsage(response)).to.include({ price_tier: 'no_thinking', thinking: false });
      });
    }
  }

  // The bodies the real harnesses send (test/fixtures/routing/harness/), after two tool rounds, on each form's own endpoint.
  const HARNESS_PATHS: Record<HarnessForm, string> = { messages: '/v1/messages', responses: '/v1/responses', chat: '/v1/chat/completions' };
  for (const harness of HARNESSES) {
    for (const [ask, tier] of [
      ['commit it', 'light'],
      ['Refactor the billing module into a repository layer: move all SQL out of InvoiceService, ReminderJob and the export code, add interfaces, and update every test.', 'heavy'],
    ] as const) {
      it(`${harness}: its own body, tool loop and all, goes by the ask to the ${tier} deployment`, async () => {
        const capture = harnessCapture(harness);
        const body = { ...harnessBody(capture, { history: [], ask, rounds: [{ template: 0, result: 'M src/billing/invoice-service.ts' }, { template: 1, result: 'ok' }] }), model: 'm-agents' };
        anthropic.script({ text: 'Done.' });
        const response = await fetch(`${t.baseUrl}${HARNESS_PATHS[capture.form]}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const raw = await response.text();
        expect(response.status, raw).to.equal(200);
        const route = parseRoute(response.headers.get('x-route'));
        expect(route, response.headers.get('x-route') ?? '').to.include({ tier, model: `claude-${tier}` });
        expect(route.reasons).not.to.include.oneOf(['history', 'length']);
      });
    }
  }

  const thinkingAsks: Array<[Form, Record<string, unknown>]> = [
    ['messages', { thinking: { type: 'enabled', budget_tokens: 1024 } }],
    ['chat', { reasoning_effort: 'high' }],
  ];
  for (const [form, ask] of thinkingAsks) {
    for (const stream of [false, true]) {
      it(`${form}${stream ? ', streamed' : ''}: ${Object.keys(ask)[0]} routes a trivial prompt to the thinking tier and bills thinking prices`, async () => {
        // The chat form streams usage only when asked to.
        const usage = form === 'chat' && stream ? { stream_options: { include_usage: true } } : {};
        const response = await call(t, form, apiKey, requestBody(form, 'm-tiers', 'hi', { ...ask, ...usage, stream, max_tokens: 4096 }));
        expect(response.status, response.raw).to.equal(200);
        const route = parseRoute(response.headers.get('x-route'));
        expect(route).to.include({ tier: 'thinking', model: 'claude-thinking' });
        expect(route.reasons[0]).to.equal('explicit_thinking');
        expect(answerUsage(response)).to.include({ price_tier: 'thinking', thinking: true });
        const record = await usageRecord(response.requestId);
        expect(record).to.include({ route_tier: 'thinking', routed_model: 'claude-thinking', thinking: true, price_tier: 'thinking' });
        // The fake's default usage, 11 in / 6 out, at thinking prices (4 and 16 per million): 44 + 96 micro-units.
        expect(Number(record.amount_micros)).to.equal(140);
      });
    }
  }
});
