// Legal-looking input of extreme shape, in each protocol form and to each kind
// of upstream: arrays of 10⁵+ elements (the finding: 130,000 `tool_result`
// blocks or `function_call_output` items answered 500 "Maximum call stack size
// exceeded", from a spread of a request-sized array into a call), and JSON in
// a string nested far deeper than a body may (tool-call arguments, which the
// body's depth check cannot see into). Every answer is 2xx or a 4xx naming the
// field, never a 5xx. Which array, upstream and streaming mode go together is
// drawn (seeded) so that each run covers the matrix differently.
import { expect } from 'chai';
import fc from 'fast-check';
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { catalogFile } from '../../support/data-plane';
import { startFakeAnthropic, startFakeOpenAI, startFakeOpenAIResponses, type FakeUpstream } from '../../support/fake-upstreams';
import { mockProvider } from '../../support/mock-catalog';

/** Above V8's limit on call arguments (about 120k here), where a spread of the array into a call throws. */
const N = 150_000;
const UPSTREAMS = ['mock', 'anthropic', 'openai', 'responses'] as const;
type Upstream = (typeof UPSTREAMS)[number];
type Form = 'messages' | 'chat' | 'responses';
const PATHS: Record<Form, string> = { messages: '/v1/messages', chat: '/v1/chat/completions', responses: '/v1/responses' };

const many = <T>(make: (i: number) => T): T[] => Array.from({ length: N }, (_, i) => make(i));

/** Shapes with a huge array, per form: the finding's first, then every other array a caller controls. */
const SHAPES: Record<Form, Record<string, (model: string) => Record<string, unknown>>> = {
  messages: {
    'tool_result blocks': (model) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: many((i) => ({ type: 'tool_result', tool_use_id: `t${i}`, content: 'ok' })) }] }),
    'text blocks of one tool_result': (model) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: many(() => ({ type: 'text', text: 'a' })) }] }] }),
    'messages': (model) => ({ model, max_tokens: 16, messages: many((i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: 'a' })) }),
    'system blocks': (model) => ({ model, max_tokens: 16, system: many(() => ({ type: 'text', text: 'a' })), messages: [{ role: 'user', content: 'hi' }] }),
    'search_result texts': (model) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'search_result', source: 'https://example.com', title: 't', content: many(() => ({ type: 'text', text: 'a' })) }] }] }),
    'tools': (model) => ({ model, max_tokens: 16, tools: many((i) => ({ name: `f${i}`, input_schema: { type: 'object' } })), messages: [{ role: 'user', content: 'hi' }] }),
  },
  chat: {
    'tool messages': (model) => ({ model, messages: many((i) => ({ role: 'tool', tool_call_id: `t${i}`, content: 'ok' })) }),
    'content parts': (model) => ({ model, messages: [{ role: 'user', content: 'hi' }, { role: 'user', content: many(() => ({ type: 'text', text: 'a' })) }] }),
    'tool calls': (model) => ({ model, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: many((i) => ({ id: `c${i}`, type: 'function', function: { name: 'f', arguments: '{}' } })) }] }),
    'stop sequences and tools': (model) => ({ model, stop: many((i) => `s${i}`), tools: many((i) => ({ type: 'function', function: { name: `f${i}` } })), messages: [{ role: 'user', content: 'hi' }] }),
  },
  responses: {
    'function_call_output items': (model) => ({ model, input: many((i) => ({ type: 'function_call_output', call_id: `t${i}`, output: 'ok' })) }),
    'content parts of a later message': (model) => ({ model, input: [{ role: 'user', content: 'hi' }, { role: 'user', content: many(() => ({ type: 'input_text', text: 'a' })) }] }),
    'function_call items': (model) => ({ model, input: many((i) => ({ type: 'function_call', call_id: `c${i}`, name: 'f', arguments: '{}' })) }),
    'output parts': (model) => ({ model, input: [{ type: 'function_call_output', call_id: 'c', output: many(() => ({ type: 'input_text', text: 'a' })) }] }),
    'tools': (model) => ({ model, tools: many((i) => ({ type: 'function', name: `f${i}`, parameters: { type: 'object' } })), input: 'hi' }),
  },
};

/** Tool-call arguments nested 20,000 levels deep, in a string: a 400 naming the arguments. */
const DEEP_ARGUMENTS = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
const DEEP: Record<'chat' | 'responses', [(model: string) => Record<string, unknown>, string]> = {
  chat: [
    (model) => ({
      model,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: DEEP_ARGUMENTS } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      ],
    }),
    'messages.1.tool_calls.0.function.arguments',
  ],
  responses: [(model) => ({ model, input: [{ type: 'function_call', call_id: 'c1', name: 'f', arguments: DEEP_ARGUMENTS }, { type: 'function_call_output', call_id: 'c1', output: 'ok' }] }), 'input.0.arguments'],
};

describe('fuzz: arrays of 10⁵+ elements and deeply nested arguments in every form answer 2xx or 4xx, never 5xx', function () {
  this.timeout(600_000);
  let t: TestApp;
  let apiKey: string;
  const fakes: FakeUpstream[] = [];

  before(async () => {
    const [anthropic, openai, responses] = await Promise.all([startFakeAnthropic(), startFakeOpenAI(), startFakeOpenAIResponses()]);
    fakes.push(anthropic, openai, responses);
    const providers: Record<Upstream, Record<string, unknown>> = {
      mock: mockProvider(),
      anthropic: { type: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'HA_KEY' },
      openai: { type: 'openai', base_url: openai.baseUrl, api_key_env: 'HA_KEY' },
      responses: { type: 'openai', base_url: responses.baseUrl, api_key_env: 'HA_KEY', responses: true },
    };
    t = await startTestApp({
      env: { HA_KEY: 'sk-huge-arrays' },
      catalog: catalogFile({
        providers,
        models: UPSTREAMS.map((upstream) => {
          const route = [{ provider: upstream, model: `${upstream}-model` }];
          return { name: `h-${upstream}`, routes: { light: route, standard: route, heavy: route, thinking: route } };
        }),
      }),
    });
    const account = await createAccount(t);
    apiKey = (await createKey(t, account.token, { model_scope: UPSTREAMS.map((upstream) => `h-${upstream}`) })).api_key;
  });

  after(async () => {
    await t?.close();
    for (const fake of fakes) await fake.close();
  });

  async function send(form: Form, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
    const response = await fetch(`${t.baseUrl}${PATHS[form]}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, text: await response.text() };
  }

  for (const form of Object.keys(SHAPES) as Form[]) {
    it(`${form}: every huge array, to every kind of upstream, plain or streamed`, async () => {
      // The finding's shape goes to every upstream, each other shape to one; plain or streamed is drawn.
      const [first, ...others] = Object.keys(SHAPES[form]);
      const seed = Date.now();
      const modes = fc.sample(fc.boolean(), { numRuns: UPSTREAMS.length + others.length, seed });
      const upstreams = fc.sample(fc.constantFrom(...UPSTREAMS), { numRuns: others.length, seed });
      const cases: Array<[string, Upstream, boolean]> = [
        ...UPSTREAMS.map((upstream, i): [string, Upstream, boolean] => [first!, upstream, modes[i]!]),
        ...others.map((name, i): [string, Upstream, boolean] => [name, upstreams[i]!, modes[UPSTREAMS.length + i]!]),
      ];
      const failures: string[] = [];
      for (const [name, upstream, stream] of cases) {
        const make = SHAPES[form][name]!;
        const { status, text } = await send(form, { ...make(`h-${upstream}`), stream });
        if (status >= 500 || status < 200) failures.push(`${name} → ${upstream}${stream ? ' (stream)' : ''} (seed ${seed}): ${status} ${text.slice(0, 200)}`);
      }
      expect(failures, failures.join('\n')).to.deep.equal([]);
    });
  }

  for (const form of Object.keys(DEEP) as Array<keyof typeof DEEP>) {
    it(`${form}: arguments nested 20,000 deep in a string are a 400 naming them`, async () => {
      const [make, field] = DEEP[form];
      for (const upstream of UPSTREAMS) {
        const { status, text } = await send(form, make(`h-${upstream}`));
        expect(status, text.slice(0, 300)).to.equal(400);
        const error = JSON.parse(text).error;
        expect(error.param ?? error.field ?? error.message).to.contain(field);
      }
    });
  }
});
