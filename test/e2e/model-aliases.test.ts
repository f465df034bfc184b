// Model aliases (docs/architecture.md §5): a client that sends a vendor model name reaches
// the neutral model that lists it; the key's scope, the model list and the
// usage records speak neutral names, and records keep the name sent too.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect } from 'chai';
import { api, createAccount, createKey, type TestAccount, type TestApp } from '../support/app';
import { startE2eGateway, usageDetail, usageRange, type E2eGateway } from './e2e-support';

describe('e2e: model aliases', function () {
  this.timeout(30_000);
  let gateway: E2eGateway;
  let t: TestApp;
  let owner: TestAccount;
  let key: { api_key_id: string; api_key: string };

  before(async () => {
    gateway = await startE2eGateway();
    t = gateway.t;
    owner = await createAccount(t);
    key = await createKey(t, owner.token, { model_scope: ['m-anthropic', 'm-openai'] });
  });

  after(async () => {
    await gateway?.close();
  });

  it('routes a vendor name to the neutral model, in both forms, and records both names', async () => {
    const anthropic = new Anthropic({ baseURL: t.baseUrl, apiKey: key.api_key, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.model).to.equal('claude-fake');
    expect(gateway.fakes.anthropic.requests.at(-1)!.body.model).to.equal('claude-fake');

    const openai = new OpenAI({ baseURL: `${t.baseUrl}/v1`, apiKey: key.api_key, maxRetries: 0 });
    const completion = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.model).to.equal('gpt-fake');

    const items = (await usageDetail(t, owner.token, key.api_key_id)).items;
    expect(items.find((i) => i.requested_model === 'claude-sonnet-4-6')).to.include({ model: 'm-anthropic', routed_model: 'claude-fake' });
    expect(items.find((i) => i.requested_model === 'gpt-4o-mini')).to.include({ model: 'm-openai', routed_model: 'gpt-fake' });
    const { start, end } = usageRange();
    const csv = await api(t, 'GET', `/api/v1/usage/export?start=${start}&end=${end}&api_key_id=${key.api_key_id}`, owner.token);
    expect(String(csv.body).split('\n')[0]).to.contain('model,requested_model,routed_model');
    expect(String(csv.body)).to.contain(',m-anthropic,claude-sonnet-4-6,claude-fake,');
  });

  it('applies the key’s scope to the neutral model an alias stands for', async () => {
    const narrow = await createKey(t, owner.token, { model_scope: ['m-openai'] });
    const anthropic = new Anthropic({ baseURL: t.baseUrl, apiKey: narrow.api_key, maxRetries: 0 });
    let caught: unknown;
    try {
      await anthropic.messages.create({ model: 'claude-opus-5-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(Anthropic.PermissionDeniedError);
    const refusal = (caught as InstanceType<typeof Anthropic.PermissionDeniedError>).error as { error: { message: string } };
    expect(refusal.error.message).to.equal('this API key may not call model "m-anthropic" (requested as "claude-opus-5-5")');
    // An alias of a model outside the scope is refused the same way; an unknown name is 404.
    const unknown = await fetch(`${t.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${narrow.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llama-3-70b', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(unknown.status).to.equal(404);
  });

  it('lists neutral names only, and answers a retrieve by alias with the neutral model', async () => {
    const openai = new OpenAI({ baseURL: `${t.baseUrl}/v1`, apiKey: key.api_key, maxRetries: 0 });
    const listed = [];
    for await (const model of openai.models.list()) listed.push(model.id);
    expect(listed.sort()).to.deep.equal(['m-anthropic', 'm-openai']);
    const retrieved = await openai.models.retrieve('claude-haiku-4-5');
    expect(retrieved.id).to.equal('m-anthropic');
  });

  it('counts tokens by alias', async () => {
    const anthropic = new Anthropic({ baseURL: t.baseUrl, apiKey: key.api_key, maxRetries: 0 });
    gateway.fakes.anthropic.script({ countTokens: 77 });
    const counted = await anthropic.messages.countTokens({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'hi' }] });
    expect(counted.input_tokens).to.equal(77);
  });
});
