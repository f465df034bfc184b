// Thinking semantics and token counting (docs/architecture.md §4, §5, §7): `adaptive` only
// permits thinking, so the assessment prices a call by its content; the price
// tier is thinking when the call was routed to the thinking tier or the
// upstream thought. count_tokens asks an Anthropic upstream for its exact
// count and counts locally elsewhere.
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import type { TestAccount, TestApp } from '../support/app';
import type { FakeUpstream } from '../support/fake-upstreams';
import { startKeyedGateway, usageDetail, type KeyedGateway, type UpstreamKind } from './e2e-support';

const PROOF =
  'Let $a, b, c > 0$ with $abc = 1$. Prove that $\\frac{1}{a^3(b+c)} + \\frac{1}{b^3(c+a)} + \\frac{1}{c^3(a+b)} \\ge \\frac{3}{2}$ and derive when equality holds.';

describe('e2e: thinking semantics and token counting', function () {
  this.timeout(30_000);
  let gateway: KeyedGateway;
  let t: TestApp;
  let fakes: Record<UpstreamKind, FakeUpstream>;
  let owner: TestAccount;
  let secret: string;
  let keyId: string;

  before(async () => {
    gateway = await startKeyedGateway();
    ({ t, fakes, owner, secret, keyId } = gateway);
  });

  after(async () => {
    await gateway?.close();
  });

  const post = (path: string, body: unknown, headers?: Record<string, string>) => gateway.post(path, body, headers);

  const tierOf = (response: Response) => /tier=(\w+)/.exec(response.headers.get('x-route') ?? '')?.[1];

  describe('thinking', () => {
    it('adaptive leaves the tier to the assessment: a greeting is not the thinking tier, a proof is', async () => {
      const light = await post('/v1/messages', { model: 'm-mock', max_tokens: 512, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'hi there' }] });
      const lightBody = await light.json();
      expect(light.status).to.equal(200);
      expect(tierOf(light)).to.not.equal('thinking');
      expect(lightBody.usage.price_tier).to.equal('no_thinking');

      const deep = await post('/v1/messages', { model: 'm-mock', max_tokens: 4096, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: PROOF }] });
      const deepBody = await deep.json();
      expect(tierOf(deep)).to.equal('thinking');
      expect(deepBody.usage.price_tier).to.equal('thinking');
    });

    it('enabled asks for the thinking tier, disabled never thinks even on a proof', async () => {
      const enabled = await post('/v1/messages', { model: 'm-mock', max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{ role: 'user', content: 'hi' }] });
      expect(tierOf(enabled)).to.equal('thinking');
      expect((await enabled.json()).usage.thinking).to.equal(true);

      const disabled = await post('/v1/messages', { model: 'm-mock', max_tokens: 4096, thinking: { type: 'disabled' }, messages: [{ role: 'user', content: PROOF }] });
      const body = await disabled.json();
      expect(tierOf(disabled)).to.not.equal('thinking');
      expect(body.usage.price_tier).to.equal('no_thinking');
      expect(body.content.some((b: { type: string }) => b.type === 'thinking')).to.equal(false);
    });

    it('output_config.effort bounds the tier: low keeps a proof off thinking and heavy, max lifts a greeting to heavy', async () => {
      const low = await post('/v1/messages', { model: 'm-mock', max_tokens: 4096, thinking: { type: 'adaptive' }, output_config: { effort: 'low' }, messages: [{ role: 'user', content: PROOF }] });
      expect(low.status).to.equal(200);
      expect(tierOf(low)).to.equal('standard');
      expect(low.headers.get('x-route')).to.contain('effort_low');
      expect((await low.json()).usage.price_tier).to.equal('no_thinking');

      const max = await post('/v1/messages', { model: 'm-mock', max_tokens: 512, output_config: { effort: 'max' }, messages: [{ role: 'user', content: 'hi there' }] });
      expect(tierOf(max)).to.equal('heavy');
      expect(max.headers.get('x-route')).to.contain('effort_max');

      const high = await post('/v1/messages', { model: 'm-mock', max_tokens: 512, output_config: { effort: 'high' }, messages: [{ role: 'user', content: 'hi there' }] });
      expect(tierOf(high)).to.equal('light');
    });

    it('bills thinking when the upstream thought, whatever tier the call was routed to', async () => {
      fakes.anthropic.script({ thinking: 'Let me see.', text: 'Hello.', usage: { input: 10, output: 30 } });
      const response = await post('/v1/messages', { model: 'm-anthropic', max_tokens: 2048, thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'hi' }] });
      const body = await response.json();
      expect(tierOf(response)).to.not.equal('thinking');
      expect(body.usage).to.include({ price_tier: 'thinking', thinking: true });
      const record = (await usageDetail(t, owner.token, keyId)).items[0]!;
      expect(record.thinking).to.equal(true);
      expect(record.tiers['thinking.output']).to.equal(30);
    });

    it('reasoning_effort none never thinks; a reasoning effort asks for the thinking tier (chat form)', async () => {
      const none = await post('/v1/chat/completions', { model: 'm-mock', reasoning_effort: 'none', messages: [{ role: 'user', content: PROOF }] });
      expect(tierOf(none)).to.not.equal('thinking');
      const high = await post('/v1/chat/completions', { model: 'm-mock', reasoning_effort: 'low', messages: [{ role: 'user', content: 'hi' }] });
      expect(tierOf(high)).to.equal('thinking');
    });
  });

  describe('count_tokens', () => {
    it('asks an Anthropic upstream for its exact count, with the caller’s body, version and betas', async () => {
      const client = new Anthropic({ baseURL: t.baseUrl, apiKey: secret, maxRetries: 0 });
      fakes.anthropic.script({ countTokens: 1234 });
      const before = fakes.anthropic.requests.length;
      const body = {
        model: 'm-anthropic',
        system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
        messages: [{ role: 'user' as const, content: 'How many tokens is this?' }],
        tools: [{ name: 'calc', input_schema: { type: 'object' as const } }],
      };
      const counted = await client.messages.countTokens(body, { headers: { 'anthropic-beta': 'token-counting-2024-11-01' } });
      expect(counted.input_tokens).to.equal(1234);
      const upstream = fakes.anthropic.requests.slice(before);
      expect(upstream).to.have.length(1);
      expect(upstream[0]!.path).to.equal('/v1/messages/count_tokens');
      expect(upstream[0]!.body).to.deep.equal({ ...body, model: 'claude-fake' });
      expect(upstream[0]!.headers['anthropic-beta']).to.equal('token-counting-2024-11-01');
      // Counting is free: no usage record.
      const records = (await usageDetail(t, owner.token, keyId)).items.filter((r) => r.model === 'm-anthropic' && r.created_at > new Date(Date.now() - 2000).toISOString());
      expect(records.every((r) => r.status !== 'ok' || r.total_tokens > 0)).to.equal(true);
    });

    it('counts locally for a model whose standard route cannot count, and when the upstream is unreachable', async () => {
      const before = { anthropic: fakes.anthropic.requests.length, openai: fakes.openai.requests.length };
      const local = await post('/v1/messages/count_tokens', { model: 'm-openai', messages: [{ role: 'user', content: 'How many tokens is this?' }] });
      expect(local.status).to.equal(200);
      expect((await local.json()).input_tokens).to.be.greaterThan(0);
      expect(fakes.openai.requests.length).to.equal(before.openai);

      fakes.anthropic.script({ status: 503 });
      const fallback = await post('/v1/messages/count_tokens', { model: 'm-anthropic', messages: [{ role: 'user', content: 'How many tokens is this?' }] });
      expect(fallback.status).to.equal(200);
      const counted = (await fallback.json()).input_tokens;
      expect(counted).to.be.greaterThan(0).and.not.equal(4242);
      expect(fakes.anthropic.requests.length).to.equal(before.anthropic + 1);
    });

    it('passes an upstream refusal of the body on as a 400', async () => {
      fakes.anthropic.script({ status: 400, error: { type: 'invalid_request_error', message: 'messages: bad' } });
      const refused = await post('/v1/messages/count_tokens', { model: 'm-anthropic', messages: [{ role: 'user', content: 'x' }] });
      expect(refused.status).to.equal(400);
      expect((await refused.json()).error.message).to.contain('messages: bad');
    });
  });
});
