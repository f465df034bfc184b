// The Vercel AI SDK's default OpenAI provider, `createOpenAI(...)('model')`,
// as most TypeScript apps call it: it speaks the Responses API, leaves
// `store` at OpenAI's default (true) and, from the second step of a tool
// loop on, sends the assistant's earlier text as `item_reference` items
// pointing at ids the gateway returned one call before. The gateway must
// resolve them from its store so the upstream still gets the whole
// conversation, in its own protocol: passed through to a Responses upstream,
// translated for a Messages or Chat Completions one.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, isStepCount, jsonSchema, streamText, tool, type ModelMessage } from 'ai';
import { expect } from 'chai';
import type { FakeUpstream } from '../support/fake-upstreams';
import { recordingFetch, startKeyedGateway, transcript, type KeyedGateway, type SentRequest, type UpstreamProtocol } from './e2e-support';

/** The model each upstream is reached by; the Responses one by the built-in catalog's general name. */
const MODEL: Record<UpstreamProtocol, string> = { responses: 'tsxt-general', anthropic: 'm-anthropic', openai: 'm-openai' };
const PROTOCOLS: UpstreamProtocol[] = ['responses', 'anthropic', 'openai'];

const QUESTION = 'What is the weather in Paris?';
const PREAMBLE = 'Let me look that up.';
const ANSWER = 'It is 22°C and sunny in Paris.';
const FOLLOW_UP = 'Should I take an umbrella?';
const FOLLOW_UP_ANSWER = 'No umbrella needed today.';
const TOOL_OUTPUT = 'Paris: 22°C, sunny';

describe('e2e: stateful Responses through the Vercel AI SDK default provider', function () {
  this.timeout(60_000);
  let gateway: KeyedGateway;

  before(async () => {
    gateway = await startKeyedGateway({ responses: true });
  });

  after(async () => {
    await gateway?.close();
  });

  const fake = (protocol: UpstreamProtocol): FakeUpstream => (protocol === 'responses' ? gateway.fakes.responses! : gateway.fakes[protocol]);

  /** The default provider pointed at the gateway, and what it sends there. */
  function provider() {
    const { fetch, sent } = recordingFetch();
    const openai = createOpenAI({ baseURL: `${gateway.t.baseUrl}/v1`, apiKey: gateway.secret, fetch });
    const responsesCalls = (): SentRequest[] => sent.filter((request) => request.method === 'POST' && request.path === '/v1/responses');
    return { openai, responsesCalls };
  }

  function weatherTool(asked: string[]) {
    return tool({
      description: 'Weather for a city',
      inputSchema: jsonSchema<{ city: string }>({
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      }),
      execute: ({ city }) => {
        asked.push(city);
        return Promise.resolve(TOOL_OUTPUT);
      },
    });
  }

  /** Reads a stream to its end; the errors in it (a failed step shows here, not as a rejection). */
  async function streamErrors(stream: AsyncIterable<{ type: string; error?: unknown }>): Promise<string[]> {
    const errors: string[] = [];
    for await (const part of stream) if (part.type === 'error') errors.push(String(part.error));
    return errors;
  }

  /** The `item_reference` ids in a Responses request body. */
  const references = (body: any): string[] =>
    (Array.isArray(body?.input) ? body.input : []).flatMap((item: { type?: string; id?: string }) => (item.type === 'item_reference' ? [item.id] : []));

  it('on a reasoning upstream: the reasoning item step 2 references reaches the upstream replayable (with its encrypted_content)', async () => {
    // The gateway calls its Responses upstream with store: false; OpenAI then only takes back a
    // reasoning item that carries encrypted_content (an id alone gets 404 "Items are not persisted").
    const upstream = fake('responses');
    upstream.unscript();
    const callId = 'call_vercel_reasoning';
    upstream.script({ thinking: 'The user wants the weather in Paris.', toolUse: { id: callId, name: 'get_weather', input: { city: 'Paris' } } }, { text: ANSWER });
    const { openai, responsesCalls } = provider();
    const result = await generateText({ model: openai(MODEL.responses), tools: { get_weather: weatherTool([]) }, stopWhen: isStepCount(2), maxRetries: 0, prompt: QUESTION });
    expect(result.text).to.equal(ANSWER);
    expect(references(responsesCalls()[1]?.body), 'step 2 references the reasoning item').to.have.length(1);

    const sent = upstream.requests.at(-1)!.body;
    expect(transcript('responses', sent)).to.deep.equal([`user:${QUESTION}`, `call:${callId}:get_weather`, `result:${callId}:${TOOL_OUTPUT}`]);
    const unreplayable = (sent.input as Array<{ type?: string; encrypted_content?: unknown }>).filter(
      (item) => item.type === 'reasoning' && typeof item.encrypted_content !== 'string',
    );
    expect(unreplayable, 'reasoning items without encrypted_content sent with store: false').to.deep.equal([]);
  });

  for (const protocol of PROTOCOLS) {
    for (const mode of ['generateText', 'streamText'] as const) {
      it(`${mode} on the ${protocol} upstream: a tool loop over 2 steps and a second turn from its response messages, the upstream getting the whole conversation each time`, async () => {
        const upstream = fake(protocol);
        const callId = `call_vercel_${protocol}_${mode}`;
        const from = upstream.requests.length;
        upstream.unscript(); // replies an earlier failed test left queued
        // Step 1 says a few words before the call, so step 2 has an assistant text item to reference.
        upstream.script(
          { text: PREAMBLE, toolUse: { id: callId, name: 'get_weather', input: { city: 'Paris' } }, usage: { input: 30, output: 12 } },
          { text: ANSWER, usage: { input: 60, output: 9 } },
          { text: FOLLOW_UP_ANSWER, usage: { input: 80, output: 5 } },
        );
        const { openai, responsesCalls } = provider();
        const asked: string[] = [];
        const settings = {
          model: openai(MODEL[protocol]),
          tools: { get_weather: weatherTool(asked) },
          stopWhen: isStepCount(2),
          maxRetries: 0,
        };

        let text: string;
        let stepFinishes: string[];
        let responseMessages: ModelMessage[];
        if (mode === 'generateText') {
          const result = await generateText({ ...settings, prompt: QUESTION });
          text = result.text;
          stepFinishes = result.steps.map((step) => step.finishReason);
          responseMessages = result.responseMessages;
        } else {
          const result = streamText({ ...settings, prompt: QUESTION });
          expect(await streamErrors(result.fullStream), 'stream errors').to.deep.equal([]);
          text = await result.text;
          stepFinishes = (await result.steps).map((step) => step.finishReason);
          responseMessages = await result.responseMessages;
        }

        // Both steps succeed: the tool ran once, and step 2 answered.
        expect(stepFinishes).to.deep.equal(['tool-calls', 'stop']);
        expect(asked).to.deep.equal(['Paris']);
        expect(text).to.equal(ANSWER);

        // Step 1 leaves `store` at its default; step 2 points at step 1's text by reference.
        const [step1, step2] = responsesCalls();
        expect(step1?.body.store, 'store is left to the default').to.equal(undefined);
        expect(references(step2?.body), 'step 2 item_reference ids').to.have.length(1);

        // The upstream's step 2 holds the first user turn, the preamble, the call and its output.
        const received = upstream.requests.slice(from);
        expect(received).to.have.length(2);
        const step1Context = [`user:${QUESTION}`];
        const step2Context = [...step1Context, `assistant:${PREAMBLE}`, `call:${callId}:get_weather`, `result:${callId}:${TOOL_OUTPUT}`];
        expect(transcript(protocol, received[0]!.body)).to.deep.equal(step1Context);
        expect(transcript(protocol, received[1]!.body), 'step 2 at the upstream').to.deep.equal(step2Context);

        // A second turn, as a chat app builds it: the history, the turn's messages, the new question.
        // (ai v7's `responseMessages` is what v5/v6 called `response.messages`: every step's messages;
        // v7's deprecated `response.messages` holds the last step's only.)
        const history: ModelMessage[] = [{ role: 'user', content: QUESTION }, ...responseMessages, { role: 'user', content: FOLLOW_UP }];
        let secondText: string;
        if (mode === 'generateText') {
          secondText = (await generateText({ ...settings, messages: history })).text;
        } else {
          const second = streamText({ ...settings, messages: history });
          expect(await streamErrors(second.fullStream), 'stream errors').to.deep.equal([]);
          secondText = await second.text;
        }
        expect(secondText).to.equal(FOLLOW_UP_ANSWER);
        const turn2 = responsesCalls()[2];
        expect(references(turn2?.body), 'second turn item_reference ids (both assistant texts)').to.have.length(2);
        expect(upstream.requests.slice(from)).to.have.length(3);
        expect(transcript(protocol, upstream.requests.at(-1)!.body), 'second turn at the upstream').to.deep.equal([
          ...step2Context,
          `assistant:${ANSWER}`,
          `user:${FOLLOW_UP}`,
        ]);
      });
    }
  }
});
