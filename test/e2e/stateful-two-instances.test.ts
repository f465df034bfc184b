// Behind a load balancer, a client's next turn may reach another gateway
// process. Two apps share one database: a response answered by app 1 (plain
// or streamed) must be retrievable and continuable through app 2 the moment
// its reply has arrived, and a conversation turn made through app 1 must be
// in the conversation app 2 lists.
import { expect } from 'chai';
import OpenAI from 'openai';
import { createAccount, createKey, startTestApp, type TestApp } from '../support/app';
import { e2eCatalog } from './e2e-support';

const ROUNDS = 15;

describe('e2e: stored responses reach a second instance with the reply', function () {
  this.timeout(60_000);
  let app1: TestApp;
  let app2: TestApp;
  let via1: OpenAI;
  let via2: OpenAI;

  before(async () => {
    app1 = await startTestApp({ catalog: e2eCatalog() });
    app2 = await startTestApp({ catalog: e2eCatalog() });
    const owner = await createAccount(app1);
    const key = await createKey(app1, owner.token, { model_scope: ['m-mock'] });
    via1 = new OpenAI({ apiKey: key.api_key, baseURL: `${app1.baseUrl}/v1`, maxRetries: 0 });
    via2 = new OpenAI({ apiKey: key.api_key, baseURL: `${app2.baseUrl}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await app2?.close();
    await app1?.close();
  });

  it('retrieves and continues through app 2 a plain response app 1 has just answered, every time', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const first = await via1.responses.create({ model: 'm-mock', input: `turn ${i}` });
      const read = await via2.responses.retrieve(first.id);
      expect(read.id).to.equal(first.id);
      expect(read.output_text).to.equal(first.output_text);
      const next = await via2.responses.create({ model: 'm-mock', previous_response_id: first.id, input: 'and then?' });
      expect(next.previous_response_id).to.equal(first.id);
    }
  });

  it('retrieves through app 2 a streamed response once app 1 has sent response.completed', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const stream = await via1.responses.create({ model: 'm-mock', input: `streamed ${i}`, stream: true });
      let completed: string | undefined;
      for await (const event of stream) if (event.type === 'response.completed') completed = event.response.id;
      expect(completed, 'response.completed').to.be.a('string');
      const read = await via2.responses.retrieve(completed!);
      expect(read.status).to.equal('completed');
    }
  });

  it('lists through app 2 the turn app 1 has just added to a conversation', async () => {
    const conversation = await via1.conversations.create({});
    for (let i = 0; i < ROUNDS; i++) {
      await via1.responses.create({ model: 'm-mock', conversation: conversation.id, input: `conversation turn ${i}` });
      const items = await via2.conversations.items.list(conversation.id, { order: 'desc', limit: 2 });
      const texts = JSON.stringify(items.data);
      expect(texts, `turn ${i}`).to.include(`conversation turn ${i}`);
    }
  });
});
