// An absurd output budget is refused with a 400 naming the field (issue 15:
// `max_tokens: 1e308` used to be forwarded upstream), in all three forms.
import { expect } from 'chai';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';

describe('security: output-token ceiling', function () {
  this.timeout(30_000);
  let t: TestApp;
  let apiKey: string;
  before(async () => {
    t = await startTestApp();
    const owner = await createAccount(t);
    apiKey = (await createKey(t, owner.token)).api_key;
  });
  after(async () => {
    await t?.close();
  });

  const post = async (path: string, body: string) => {
    const response = await fetch(`${t.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body });
    return { status: response.status, text: await response.text() };
  };

  const cases: Array<[string, string, string]> = [
    ['/v1/messages', '{"model":"tsxt-general","max_tokens":1e308,"messages":[{"role":"user","content":"hi"}]}', 'max_tokens'],
    ['/v1/messages', '{"model":"tsxt-general","max_tokens":1000001,"messages":[{"role":"user","content":"hi"}]}', 'max_tokens'],
    ['/v1/chat/completions', '{"model":"tsxt-general","max_completion_tokens":1e308,"messages":[{"role":"user","content":"hi"}]}', 'max_completion_tokens'],
    ['/v1/chat/completions', '{"model":"tsxt-general","max_tokens":99999999,"messages":[{"role":"user","content":"hi"}]}', 'max_tokens'],
    ['/v1/responses', '{"model":"tsxt-general","max_output_tokens":1e308,"input":"hi"}', 'max_output_tokens'],
  ];
  for (const [path, body, field] of cases) {
    it(`${path} with ${body.match(/"max_\w+":[^,]+/)?.[0]} → 400 naming ${field}`, async () => {
      const { status, text } = await post(path, body);
      expect(status, text).to.equal(400);
      expect(text).to.contain(field);
    });
  }

  it('still answers a large but real budget', async () => {
    const { status, text } = await post('/v1/messages', '{"model":"tsxt-general","max_tokens":128000,"messages":[{"role":"user","content":"hi"}]}');
    expect(status, text).to.equal(200);
  });
});
