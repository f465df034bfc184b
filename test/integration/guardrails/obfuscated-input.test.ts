// Input guardrails against obfuscated values, attacked as the findings did:
// zero-width chars and soft hyphens inside e-mails, mobile numbers, sk-/AKIA
// keys, card numbers and PEM headers; full-width ＠ and digits; Cyrillic
// look-alikes; Arabic-Indic digits; %40 and &#64;. Each is masked on the raw
// span the upstream would have read (the text around it untouched), in each
// protocol form, and a block rule refuses the call with a 400 naming it.
import { expect } from 'chai';
import { api, createAccount, createKey } from '../../support/app';
import { usageRecord } from '../../support/data-plane';
import { startGuardrailGateway, type GuardrailGateway } from './guardrail-gateway';
import { idCard } from '../../unit/guardrails/guardrail-samples';

/** [class, the obfuscated value as sent, the rule that must find it] */
const OBFUSCATED: Array<[string, string, string]> = [
  ['zero-width space in an e-mail', 'li\u200B.lei@exam\u200Bple.cn', 'email'],
  ['soft hyphen in an e-mail', 'li.lei@ex\u00ADample.cn', 'email'],
  ['zero-width joiner in a mobile number', '139\u200D1234\u200D5678', 'cn-mobile'],
  ['soft hyphen in an sk- key', 'sk-proj-4bN7xQ2m\u00ADR9kT1vW8yZ3cL6fH0jP5', 'api-secret'],
  ['zero-width space in an AKIA key', 'AKIA\u200BIOSFODNN7EXAMPLE', 'api-secret'],
  ['word joiners in a card number', '4111\u20601111\u20601111\u20601111', 'bank-card'],
  ['zero-width space in a PEM header', '-----BEGIN RSA PRIVATE\u200B KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----', 'api-secret'],
  ['full-width ＠', 'li.lei＠example.cn', 'email'],
  ['full-width digits', '１３９１２３４５６７８', 'cn-mobile'],
  ['full-width digits in an ID number', idCard('11010519880517123').replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d))), 'cn-id-card'],
  ['Cyrillic look-alikes in an e-mail', 'јоhn.smith@ехаmple.com', 'email'],
  ['Cyrillic look-alikes in a key prefix', 'ѕk-proj-4bN7xQ2mR9kT1vW8yZ3cL6fH0jP5', 'api-secret'],
  ['Arabic-Indic digits', '١٣٩١٢٣٤٥٦٧٨', 'cn-mobile'],
  ['extended Arabic-Indic digits in a card number', '۴۱۱۱ ۱۱۱۱ ۱۱۱۱ ۱۱۱۱', 'bank-card'],
  ['%40', 'li.lei%40example.cn', 'email'],
  ['&#64;', 'li.lei&#64;example.cn', 'email'],
  ['&commat; and &#x40;', 'ops&commat;example.com, dev&#x40;example.com', 'email'],
];

type Form = 'messages' | 'chat' | 'responses';
const FORMS: Array<[Form, string, 'anthropic' | 'responses']> = [
  ['messages', '/v1/messages', 'anthropic'],
  ['chat', '/v1/chat/completions', 'responses'],
  ['responses', '/v1/responses', 'responses'],
];

function body(form: Form, text: string): Record<string, unknown> {
  if (form === 'messages') return { model: 'g-claude', max_tokens: 64, messages: [{ role: 'user', content: text }] };
  if (form === 'chat') return { model: 'g-gpt', messages: [{ role: 'user', content: text }] };
  return { model: 'g-gpt', input: [{ role: 'user', content: [{ type: 'input_text', text }] }] };
}

/** The user text as the upstream received it. */
function sentText(form: Form, upstreamBody: any): string {
  if (form === 'messages') return upstreamBody.messages[0].content;
  if (form === 'chat') return upstreamBody.messages[0].content;
  return upstreamBody.input[0].content[0].text;
}

describe('input guardrails read obfuscated values as a reader does', function () {
  this.timeout(120_000);
  let gateway: GuardrailGateway;

  before(async () => {
    gateway = await startGuardrailGateway();
  });

  after(async () => {
    await gateway?.close();
  });

  async function post(path: string, payload: Record<string, unknown>, key?: string): Promise<{ status: number; body: any; requestId: string }> {
    const { status, raw, requestId } = await gateway.post(path, payload, key);
    return { status, body: JSON.parse(raw), requestId };
  }

  for (const [form, path, upstream] of FORMS) {
    it(`${form}: every class is masked on the raw span the upstream would read, the text around it untouched`, async () => {
      const fake = upstream === 'anthropic' ? gateway.anthropic : gateway.responses;
      for (const [name, value, rule] of OBFUSCATED) {
        const text = `前文 before: ${value} :after 后文`;
        const response = await post(path, body(form, text));
        expect(response.status, `${name}: ${JSON.stringify(response.body)}`).to.equal(200);
        const sent = sentText(form, fake.requests.at(-1)!.body);
        expect(sent, name).to.match(new RegExp(`^前文 before: (\\[REDACTED:${rule}\\](, )?)+ :after 后文$`));
        expect((await usageRecord(response.requestId)).guardrail_hits[rule], name).to.be.at.least(1);
      }
    });
  }

  it('a block rule refuses an obfuscated value with a 400 naming the rule, and nothing reaches the upstream', async () => {
    const account = await createAccount(gateway.t);
    const key = (await createKey(gateway.t, account.token, { model_scope: ['g-claude', 'g-gpt'] })).api_key;
    for (const rule of ['email', 'cn-mobile', 'api-secret', 'bank-card', 'cn-id-card']) {
      expect((await api(gateway.t, 'PUT', `/api/v1/account/guardrails/${rule}`, account.token, { policy: 'block' })).status).to.equal(200);
    }
    for (const [form, path, upstream] of FORMS) {
      const fake = upstream === 'anthropic' ? gateway.anthropic : gateway.responses;
      for (const [name, value, rule] of OBFUSCATED) {
        const calls = fake.requests.length;
        const response = await post(path, body(form, `hi ${value} bye`), key);
        expect(response.status, `${form} ${name}`).to.equal(400);
        expect(response.body.error.message, `${form} ${name}`).to.equal(`Request blocked by guardrail rule "${rule}"`);
        expect(fake.requests.length, `${form} ${name}`).to.equal(calls);
      }
    }
  });
});
