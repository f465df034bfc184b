// No call is answered without a complete reply, and none is billed `ok`
// without one (issue 27). A cross-protocol call names the fields it dropped
// in `x-gateway-dropped`, and those names come from the caller's JSON: one
// that is not Latin-1 (`字段`) or holds CR/LF used to crash the header write,
// leaving the client hanging and the call recorded as ok. Each name is now
// written as percent-encoded UTF-8 where it is not plain visible ASCII.
import { expect } from 'chai';
import { parseSse } from '../../support/sse-client';
import { formBody, MODEL, post, recordOfKey, startBillingGateway, UNICODE_MODEL, type BillingGateway, type Form } from './upstream-billing-support';

/** Field names a caller may send: not Latin-1, CR/LF (a header-injection attempt), a comma and a percent sign. */
const ODD = { 字段: 1, 'a\r\nSet-Cookie: stolen=1': 2, 'rate, 50%': 3 };
const ENCODED = ['%E5%AD%97%E6%AE%B5', 'a%0D%0ASet-Cookie: stolen=1', 'rate%2C 50%25'];

/** Cross-protocol pairs: the caller's form against an upstream of the other protocol, which drops unknown top-level fields. */
const CROSS: ReadonlyArray<readonly [Form, 'anthropic' | 'openai']> = [
  ['messages', 'openai'],
  ['chat', 'anthropic'],
  ['responses', 'anthropic'],
  ['responses', 'openai'],
];

/** The last event of a complete stream, in each form. */
function streamEnded(form: Form, text: string): boolean {
  const events = parseSse(text);
  if (form === 'messages') return events.at(-1)?.event === 'message_stop';
  if (form === 'chat') return events.at(-1)?.data === '[DONE]' && events.some((e) => e.data?.choices?.[0]?.finish_reason === 'stop');
  return events.at(-1)?.data?.type === 'response.completed';
}

describe('billing: odd field names in x-gateway-dropped', function () {
  this.timeout(60_000);
  let g: BillingGateway;

  before(async () => {
    g = await startBillingGateway();
  });
  after(async () => g?.close());

  for (const [form, upstream] of CROSS) {
    for (const stream of [false, true]) {
      it(`${form} → ${upstream}, ${stream ? 'streamed' : 'plain'}: the complete reply, the names encoded, the record ok`, async () => {
        const key = await g.key();
        g.fakes[upstream].script({ text: 'Hello there, in full.' });
        const response = await post(g, form, key.secret, formBody(form, MODEL[upstream], 'Say hello.', stream, ODD), AbortSignal.timeout(20_000));
        const text = await response.text();
        expect(response.status, text).to.equal(200);

        const header = response.headers.get('x-gateway-dropped');
        expect(header, 'the dropped names are listed').to.be.a('string');
        const names = header!.split(', ');
        expect(names).to.include.members(ENCODED);
        expect(names.map(decodeURIComponent)).to.include.members(Object.keys(ODD));
        // Nothing the caller wrote became a header of its own.
        expect(response.headers.get('set-cookie')).to.equal(null);

        if (stream) expect(streamEnded(form, text), text).to.equal(true);
        else expect(JSON.stringify(JSON.parse(text))).to.include('in full.');
        const record = await recordOfKey(key.id);
        expect(record).to.include({ status: 'ok', error_code: null });
        expect(record.request_id).to.equal(response.headers.get('request-id'));
      });
    }
  }

  it('x-route names an upstream model that is not Latin-1 the same way', async () => {
    const key = await g.key();
    for (const stream of [false, true]) {
      const response = await post(g, 'chat', key.secret, formBody('chat', UNICODE_MODEL, 'Say hello.', stream));
      expect(response.status).to.equal(200);
      await response.text();
      expect(response.headers.get('x-route')).to.match(/; model=qwen-%E9%80%9A%E4%B9%89$/);
    }
  });

  it('a pass-through call drops nothing and sends no such header', async () => {
    const key = await g.key();
    const response = await post(g, 'messages', key.secret, formBody('messages', MODEL.anthropic, 'Say hello.', false, ODD));
    expect(response.status).to.equal(200);
    expect(response.headers.get('x-gateway-dropped')).to.equal(null);
    expect(g.fakes.anthropic.requests.at(-1)!.body).to.include(ODD);
  });
});
