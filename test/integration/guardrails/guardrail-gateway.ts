// The gateway the guardrail attack tests run against (not a spec file): the
// real app in front of a fake Anthropic upstream (model `g-claude`) and a fake
// OpenAI upstream that speaks the Responses API too (`g-gpt`), with one
// account's key for both.
import { createAccount, createKey, startTestApp, type TestApp } from '../../support/app';
import { catalogFile } from '../../support/data-plane';
import { startFakeAnthropic, startFakeOpenAIResponses, type FakeUpstream } from '../../support/fake-upstreams';

export interface GuardrailGateway {
  t: TestApp;
  anthropic: FakeUpstream;
  responses: FakeUpstream;
  apiKey: string;
  /** POSTs a body with the key (another one when given); the raw reply and its request id. */
  post(path: string, body: Record<string, unknown>, key?: string): Promise<{ status: number; raw: string; requestId: string }>;
  close(): Promise<void>;
}

export async function startGuardrailGateway(): Promise<GuardrailGateway> {
  const [anthropic, responses] = await Promise.all([startFakeAnthropic(), startFakeOpenAIResponses()]);
  const t = await startTestApp({
    env: { GG_ANTHROPIC_KEY: 'sk-ant-gg', GG_OPENAI_KEY: 'sk-openai-gg' },
    catalog: catalogFile({
      providers: {
        claude: { type: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'GG_ANTHROPIC_KEY' },
        gpt: { type: 'openai', base_url: responses.baseUrl, api_key_env: 'GG_OPENAI_KEY', responses: true },
      },
      models: [
        { name: 'g-claude', routes: { standard: [{ provider: 'claude', model: 'claude-g' }] } },
        { name: 'g-gpt', routes: { standard: [{ provider: 'gpt', model: 'gpt-g' }] } },
      ],
    }),
  });
  const account = await createAccount(t);
  const apiKey = (await createKey(t, account.token, { model_scope: ['g-claude', 'g-gpt'] })).api_key as string;
  return {
    t,
    anthropic,
    responses,
    apiKey,
    post: async (path, body, key = apiKey) => {
      const response = await fetch(`${t.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, raw: await response.text(), requestId: response.headers.get('request-id') ?? '' };
    },
    close: async () => {
      await t.close();
      await anthropic.close();
      await responses.close();
    },
  };
}
