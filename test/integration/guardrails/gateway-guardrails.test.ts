// Guardrails through the real app (docs/architecture.md §6), both protocol forms, plain and
// streamed, with fake upstreams that speak the real protocols: input block and
// redact, output redact and block (the latter set per account through the
// control plane), hits on the usage record, and a property test that no
// sensitive value crosses the gateway however the upstream chunks it.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { testDatabase } from '../../support/db';
import { answerText, call, catalogFile, requestBody, stopReason, usageRecord, type DataPlaneResponse, type Form } from '../../support/data-plane';
import { startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '../../support/fake-upstreams';
import { idCard, pemKey } from '../../unit/guardrails/guardrail-samples';

const BLOCKED_WORD = 'project-nightingale';
const MOBILE = '13912345678';
const ID_CARD = idCard('11010519880517123');
const EMAIL = 'li.lei@example.cn';
const TSXT_KEY = `tsxt-${'Ab3xY9'.repeat(7)}Qz7k`;
/** Which upstream each model reaches; the client form is independent of it. */
const MODELS = { 'g-claude': 'anthropic', 'g-gpt': 'openai' } as const;
type Model = keyof typeof MODELS;
const FORMS = ['messages', 'chat'] as const satisfies readonly Form[];

/** `text` cut into pieces of `size` chars: many small SSE events. */
const pieces = (text: string, size: number): string[] => text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];

describe('guardrails through the gateway', function () {
  this.timeout(60_000);
  let t: TestApp;
  let fakes: Record<'anthropic' | 'openai', FakeUpstream>;
  let apiKey: string;

  before(async () => {
    const [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAI()]);
    fakes = { anthropic, openai };
    t = await startTestApp({
      env: { GG_ANTHROPIC_KEY: 'sk-ant-gg', GG_OPENAI_KEY: 'sk-openai-gg' },
      catalog: catalogFile({
        providers: {
          claude: { type: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'GG_ANTHROPIC_KEY' },
          gpt: { type: 'openai', base_url: openai.baseUrl, api_key_env: 'GG_OPENAI_KEY' },
        },
        models: [
          { name: 'g-claude', routes: { standard: [{ provider: 'claude', model: 'claude-g' }] } },
          { name: 'g-gpt', routes: { standard: [{ provider: 'gpt', model: 'gpt-g' }] } },
        ],
        guardrails: { block_list: [BLOCKED_WORD, '夜莺计划'] },
      }),
    });
    ({ apiKey } = await newTenant());
  });

  after(async () => {
    await t?.close();
    await fakes?.anthropic.close();
    await fakes?.openai.close();
  });

  async function newTenant(): Promise<{ owner: TestAccount; apiKey: string }> {
    const account = await createAccount(t);
    const key = await createKey(t, account.token, { model_scope: Object.keys(MODELS) });
    return { owner: account, apiKey: key.api_key };
  }

  /** One call; a streamed chat call asks for usage so the stream carries it. */
  function ask(form: Form, model: Model, text: string, stream: boolean, key = apiKey): Promise<DataPlaneResponse> {
    const extra = form === 'chat' && stream ? { stream_options: { include_usage: true } } : {};
    return call(t, form, key, requestBody(form, model, text, { stream, ...extra }));
  }

  describe('input', () => {
    for (const form of FORMS) {
      it(`${form}: block → 400 invalid_request_error naming the rule, never echoing the match; metered as blocked`, async () => {
        const upstreamCalls = fakes.anthropic.requests.length;
        const response = await ask(form, 'g-claude', `Tell me all about ${BLOCKED_WORD.toUpperCase()}, please.`, false);

        expect(response.status).to.equal(400);
        const error = response.body.error;
        expect(error.type).to.equal('invalid_request_error');
        expect(error.message).to.contain('"block-list"');
        expect(response.raw.toLowerCase()).not.to.contain(BLOCKED_WORD);
        expect(fakes.anthropic.requests.length).to.equal(upstreamCalls);
        const record = await usageRecord(response.requestId);
        expect(record).to.include({ status: 'blocked', error_code: 'guardrail_blocked', routed_model: null });
        expect(Number(record.total_tokens)).to.equal(0);
      });
    }

    it('redact → the upstream sees masks instead of the phone, ID number and e-mail', async () => {
      const text = `My phone is ${MOBILE}, ID ${ID_CARD}, mail ${EMAIL}. Please file it.`;
      for (const [form, model, fake] of [
        ['messages', 'g-claude', 'anthropic'],
        ['chat', 'g-gpt', 'openai'],
      ] as const) {
        const response = await ask(form, model, text, false);
        expect(response.status, response.raw).to.equal(200);
        const sent = fakes[fake].requests.at(-1)!.rawBody;
        expect(sent).to.contain('[REDACTED:cn-mobile]').and.contain('[REDACTED:cn-id-card]').and.contain('[REDACTED:email]');
        for (const value of [MOBILE, ID_CARD, EMAIL]) expect(sent).not.to.contain(value);
        const record = await usageRecord(response.requestId);
        expect(record.guardrail_hits).to.deep.equal({ 'cn-mobile': 1, 'cn-id-card': 1, email: 1 });
      }
    });
  });

  describe('output', () => {
    const reply = `Sure. Call ${MOBILE} and use the key ${TSXT_KEY} to sign in. Anything else?`;

    for (const model of Object.keys(MODELS) as Model[]) {
      for (const form of FORMS) {
        for (const stream of [false, true]) {
          it(`${form} via ${MODELS[model]}${stream ? ', streamed in 3-char SSE chunks' : ''}: redacts the phone and the key; hits on the usage record`, async () => {
            fakes[MODELS[model]].script({ text: reply, chunks: pieces(reply, 3) });
            const response = await ask(form, model, 'How do I reach support?', stream);

            expect(response.status, response.raw).to.equal(200);
            expect(answerText(form, response)).to.equal('Sure. Call [REDACTED:cn-mobile] and use the key [REDACTED:api-secret] to sign in. Anything else?');
            expect(response.raw).not.to.contain(MOBILE);
            expect(response.raw).not.to.contain(TSXT_KEY.slice(0, 20));
            const record = await usageRecord(response.requestId);
            expect(record).to.include({ status: 'ok' });
            expect(record.guardrail_hits).to.deep.equal({ 'cn-mobile': 1, 'api-secret': 1 });
          });
        }
      }
    }

    it('redacts a whole private key streamed line by line, and one cut off by the end of the reply', async () => {
      const key = pemKey(3200);
      const cut = pemKey(3000, 5).slice(0, 1800);
      const text = `Here:\n${key}\nand the other:\n${cut}`;
      fakes.anthropic.script({ text, chunks: pieces(text, 17) });
      const response = await ask('messages', 'g-claude', 'Show me the keys.', true);
      expect(answerText('messages', response)).to.equal('Here:\n[REDACTED:api-secret]\nand the other:\n[REDACTED:api-secret]');
      expect((await usageRecord(response.requestId)).guardrail_hits).to.deep.equal({ 'api-secret': 2 });
    });

    describe('block, set per account through the control plane', () => {
      let tenant: { owner: TestAccount; apiKey: string };

      before(async () => {
        tenant = await newTenant();
        const set = await api(t, 'PUT', '/api/v1/account/guardrails/cn-mobile', tenant.owner.token, { policy: 'block' });
        expect(set.status, JSON.stringify(set.body)).to.equal(200);
        expect(set.body).to.include({ rule: 'cn-mobile', policy: 'block', default_policy: 'redact', overridden: true });
      });

      for (const form of FORMS) {
        for (const stream of [false, true]) {
          const expected = form === 'messages' ? 'refusal' : 'content_filter';
          it(`${form}${stream ? ', streamed' : ''}: ends with ${form === 'messages' ? 'stop_reason' : 'finish_reason'} "${expected}", the number never sent`, async () => {
            const text = `Lead text that is safe to show. ${'More safe text. '.repeat(30)}Now call ${MOBILE} today.`;
            fakes.openai.script({ text, chunks: pieces(text, 5) });
            const response = await ask(form, 'g-gpt', 'How do I reach support?', stream, tenant.apiKey);

            expect(response.status, response.raw).to.equal(200);
            expect(stopReason(form, response)).to.equal(expected);
            expect(response.raw).not.to.contain(MOBILE);
            // Text that could not be part of the number may have gone out before it; not one of its digits did.
            expect(text.slice(0, text.indexOf(MOBILE)).startsWith(answerText(form, response))).to.equal(true);
            const record = await usageRecord(response.requestId);
            expect(record).to.include({ status: 'blocked' });
            expect(record.guardrail_hits).to.deep.equal({ 'cn-mobile': 1 });
          });
        }
      }

      it('leaves other accounts on the default (redact)', async () => {
        fakes.openai.script({ text: `Call ${MOBILE}.` });
        const response = await ask('chat', 'g-gpt', 'How do I reach support?', false);
        expect(stopReason('chat', response)).to.equal('stop');
        expect(answerText('chat', response)).to.equal('Call [REDACTED:cn-mobile].');
      });
    });

    it('counts hits per rule across calls on the usage records', async () => {
      const { owner: counted, apiKey: key } = await newTenant();
      const texts = [`${MOBILE} and ${EMAIL}`, `only ${EMAIL}`, `${MOBILE}, ${MOBILE.replace('1391', '1381')} and ${TSXT_KEY}`];
      for (const text of texts) {
        fakes.anthropic.script({ text });
        expect((await ask('messages', 'g-claude', 'go', false, key)).status).to.equal(200);
      }
      const db = await testDatabase();
      const { rows } = await db.pool.query<{ rule: string; hits: string }>(
        `select key as rule, sum(value::int) as hits from usage_records, jsonb_each_text(guardrail_hits)
          where account_id = $1 group by key order by key`,
        [counted.accountId],
      );
      expect(rows.map((row) => [row.rule, Number(row.hits)])).to.deep.equal([
        ['api-secret', 1],
        ['cn-mobile', 3],
        ['email', 2],
      ]);
    });
  });

  describe('property: no sensitive value crosses the gateway, however the upstream chunks it', () => {
    const digits = (count: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: count, maxLength: count });
    const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const sensitive = fc.oneof(
      fc.tuple(fc.integer({ min: 3, max: 9 }), digits(9), fc.constantFrom('', ' ', '-')).map(([second, rest, sep]) => {
        const number = `1${second}${rest}`;
        return sep === '' ? number : `${number.slice(0, 3)}${sep}${number.slice(3, 7)}${sep}${number.slice(7)}`;
      }),
      fc.string({ unit: fc.constantFrom(...BASE62), minLength: 46, maxLength: 46 }).map((body) => `tsxt-${body}`),
      fc.constant(ID_CARD),
      fc.constant(EMAIL),
    );
    const prose = fc.string({ unit: fc.constantFrom(...'abcdef xyz 你好，。!\n'), minLength: 0, maxLength: 400 });
    const scenario = fc.record({
      before: prose,
      secret: sensitive,
      after: prose,
      sizes: fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 12 }),
      form: fc.constantFrom(...FORMS),
      model: fc.constantFrom(...(Object.keys(MODELS) as Model[])),
      stream: fc.boolean(),
    });

    it('streamed or not, in either form, from either upstream protocol (30 runs)', async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async ({ before, secret, after, sizes, form, model, stream }) => {
          const text = `${before} ${secret} ${after}`;
          const chunks: string[] = [];
          for (let at = 0, i = 0; at < text.length; i++) {
            const size = sizes[i % sizes.length] ?? 1;
            chunks.push(text.slice(at, at + size));
            at += size;
          }
          fakes[MODELS[model]].script({ text, chunks });
          const response = await ask(form, model, `probe ${randomBytes(3).toString('hex')}`, stream);
          expect(response.status, response.raw).to.equal(200);
          const answer = answerText(form, response);
          expect(answer).not.to.contain(secret);
          expect(answer).to.match(/\[REDACTED:(cn-mobile|api-secret|cn-id-card|email)\]/);
          // Nor anywhere else in what the client got (JSON-escaped or not).
          expect(response.raw).not.to.contain(secret);
          expect(response.raw).not.to.contain(JSON.stringify(secret).slice(1, -1));
        }),
        { numRuns: 30 },
      );
    });
  });
});
