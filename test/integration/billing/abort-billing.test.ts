// A client that hangs up does not zero the bill (issue 27, docs/architecture.md §10). Once
// the request reached its upstream, the upstream charges the prompt: a call
// cut before the first byte is billed the input it was sent (counted
// locally, `estimated`), and one cut mid-stream that input plus the output
// produced, in every form against every kind of upstream. Exact upstream
// figures win where they arrived (Anthropic's message_start).
import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { countTokens } from '../../../src/tokenizer';
import { tierMicros } from './billing-support';
import {
  formBody,
  GPT_INPUT_UNIFY,
  MODEL,
  PAIRS,
  post,
  prose,
  readThenHangUp,
  recordOfKey,
  SLOW_MOCK,
  startBillingGateway,
  until,
  type BillingGateway,
  type Form,
  type RecordRow,
  type Upstream,
} from './upstream-billing-support';

/** A local count of the sent body holds the prompt's words plus a few tokens of system prompt, names and roles. */
const SLACK = 40;

function expectEstimatedInput(record: RecordRow, prompt: string, upstream: Upstream): void {
  const words = countTokens(prompt);
  expect(record.raw_input_cache_miss, 'the prompt as sent, counted locally').to.be.within(words, words + SLACK);
  expect(record.raw_input_cache_hit).to.equal(0);
  const factor = upstream === 'openai' ? GPT_INPUT_UNIFY : 1;
  expect(Number(record.tokens_input_cache_miss), 'unified by the deployment’s input factor').to.equal(Math.ceil(record.raw_input_cache_miss * factor));
  expect(Number(record.amount_micros)).to.be.greaterThan(0);
}

/** What shows a streamed reply has started to carry text, in each form. */
const TEXT_ARRIVED: Record<Form, (text: string) => boolean> = {
  messages: (text) => text.includes('"text_delta"'),
  chat: (text) => /"content":"[^"]/.test(text),
  responses: (text) => text.includes('response.output_text.delta'),
};

describe('billing: a call its client hangs up on is billed for what its upstream charges', function () {
  this.timeout(120_000);
  let g: BillingGateway;
  let serial = 0;

  before(async () => {
    g = await startBillingGateway();
  });
  after(async () => g?.close());

  describe('before the first byte: the input the upstream was sent', () => {
    for (const [form, upstream] of PAIRS) {
      for (const stream of [false, true]) {
        it(`${form} → ${upstream}, ${stream ? 'streamed' : 'plain'}`, async () => {
          const key = await g.key();
          const prompt = prose(`Abort case ${++serial}:`, 150);
          const controller = new AbortController();
          let asked: () => boolean;
          if (upstream === 'mock') {
            // The mock has the prompt as soon as it is called; this one takes 30 s to answer.
            asked = () => true;
          } else {
            const fake = g.fakes[upstream];
            fake.script({ hang: true });
            const before = fake.requests.length;
            asked = () => fake.requests.length > before;
          }
          const model = upstream === 'mock' ? SLOW_MOCK : MODEL[upstream];
          const pending = post(g, form, key.secret, formBody(form, model, prompt, stream), controller.signal).catch((error: unknown) => error);
          await until(asked, 'the upstream got the whole request');
          if (upstream === 'mock') await delay(1_000);
          controller.abort();
          expect(await pending).to.be.instanceOf(Error);

          const record = await recordOfKey(key.id);
          expect(record).to.include({ status: 'client_aborted', error_code: 'client_aborted', estimated: true });
          expect(record.raw_output).to.equal(0);
          expectEstimatedInput(record, prompt, upstream);
        });
      }
    }
  });

  describe('mid-stream: the input sent plus the output produced, even where the input only comes in the last chunk', () => {
    // Sent before the upstream goes quiet: the text up to the marker an agent hangs up on.
    const CHUNKS = ['Alpha ', 'beta ', 'gamma ', 'MARKER ', 'never ', 'sent ', 'at ', 'all.'];
    const PRODUCED = countTokens('Alpha beta gamma MARKER ');
    /** Events each fake sends before the text: message_start, content_block_start, ping / the role chunk / created, in_progress, output_item.added, content_part.added. */
    const OPENING: Record<'anthropic' | 'openai' | 'responses', number> = { anthropic: 3, openai: 1, responses: 4 };

    for (const [form, upstream] of PAIRS) {
      it(`${form} → ${upstream}: the client hangs up once it sees ${upstream === 'mock' ? 'the first text' : 'the marker'}`, async () => {
        const key = await g.key();
        const prompt = prose(`Marker case ${++serial}:`, 150);
        if (upstream !== 'mock') g.fakes[upstream].script({ chunks: CHUNKS, hangAfterEvents: OPENING[upstream] + 4, usage: { input: 777, output: 999 } });
        const controller = new AbortController();
        const response = await post(g, form, key.secret, formBody(form, MODEL[upstream], prompt, true), controller.signal);
        expect(response.status).to.equal(200);
        const read = await readThenHangUp(response, controller, upstream === 'mock' ? TEXT_ARRIVED[form] : (text) => text.includes('MARKER'));
        expect(read).to.not.include('never');

        const record = await recordOfKey(key.id);
        expect(record).to.include({ status: 'client_aborted', estimated: true });
        expect(record.request_id).to.equal(response.headers.get('request-id'));
        if (upstream === 'anthropic') {
          // Anthropic's message_start carried the input: its figure, not a count.
          expect(record.raw_input_cache_miss).to.equal(777);
        } else if (upstream === 'mock') {
          // The mock reports its input before any text, as Anthropic does.
          expect(record.raw_input_cache_miss).to.be.within(countTokens(prompt), countTokens(prompt) + SLACK);
        } else {
          expectEstimatedInput(record, prompt, upstream);
        }
        // What was produced before the hang-up, counted locally; never the upstream's 999 for the whole answer.
        if (upstream === 'mock') expect(record.raw_output).to.be.greaterThan(0);
        else expect(record.raw_output).to.be.within(PRODUCED, PRODUCED + 2);
      });
    }
  });

  it('a 540 KB prompt cut after its first delta costs what the prompt costs, not ~0', async () => {
    const key = await g.key();
    let prompt = '';
    for (let i = 0; Buffer.byteLength(prompt) < 540 * 1024; i++) prompt += `${prose(`Section ${i}.`, 60)}\n`;
    const words = countTokens(prompt);
    g.fakes.openai.script({ chunks: ['Reading ', 'your ', 'long ', 'prompt.'], hangAfterEvents: 2 });
    const controller = new AbortController();
    const response = await post(g, 'chat', key.secret, formBody('chat', MODEL.openai, prompt, true), controller.signal);
    await readThenHangUp(response, controller, TEXT_ARRIVED.chat);

    const record = await recordOfKey(key.id);
    expect(record).to.include({ status: 'client_aborted', estimated: true });
    expect(record.raw_input_cache_miss, 'the prompt, counted locally').to.be.within(words, words + SLACK);
    // At the cache-miss price (2 per million unified tokens) with the deployment's factor.
    const promptCost = tierMicros(Math.ceil(words * GPT_INPUT_UNIFY), '2');
    expect(BigInt(record.amount_micros) >= promptCost, `${record.amount_micros} µ ≥ ${promptCost} µ`).to.equal(true);
    process.stdout.write(`      540 KB prompt: ${words} tokens billed ${(Number(record.amount_micros) / 1e6).toFixed(6)} CNY (estimated)\n`);
  });

  it('the gateway’s own shutdown cut before the first byte bills the input sent too', async () => {
    const short = await startBillingGateway({ GATEWAY_SHUTDOWN_GRACE_MS: '200' });
    try {
      const key = await short.key();
      const prompt = prose('Shutdown case:', 150);
      short.fakes.anthropic.script({ hang: true });
      const pending = post(short, 'messages', key.secret, formBody('messages', MODEL.anthropic, prompt, true)).then(
        async (response) => ({ status: response.status, text: await response.text() }),
        (error: unknown) => error,
      );
      await until(() => short.fakes.anthropic.requests.length > 0, 'the upstream got the request');
      await short.t.close();
      const answer = await pending;
      expect(answer, 'the client is told why').to.have.property('status', 503);

      const record = await recordOfKey(key.id);
      expect(record).to.include({ status: 'upstream_error', error_code: 'shutting_down', estimated: true });
      expectEstimatedInput(record, prompt, 'anthropic');
    } finally {
      await Promise.all(Object.values(short.fakes).map((fake) => fake.close()));
    }
  });
});
