// The OpenAI Agents SDK keeping conversation state on the gateway, the three
// ways its docs offer: an `OpenAIConversationsSession` (the SDK reads the
// history from /v1/conversations/{id}/items and appends each run's items),
// `previousResponseId` (run 2 continues from run 1's last response and only
// sends what is new, a tool loop included), and a server-managed
// `conversationId`. In each, the upstream must get the earlier run's turns
// in its own protocol: passed through to a Responses upstream, translated
// for a Messages one.
//
// The SDK is pointed at the gateway with a Runner over an OpenAIProvider with
// our client (the same thing setDefaultOpenAIClient does, without changing
// process-wide defaults other suites run with); the session gets the client
// too.
import { OpenAIConversationsSession, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { FakeUpstream } from '../support/fake-upstreams';
import { expectApiError, recordingFetch, startKeyedGateway, transcript, type KeyedGateway, type SentRequest } from './e2e-support';
import { forecast, weatherAgent } from './weather-agent';

type Protocol = 'responses' | 'anthropic';
const MODEL: Record<Protocol, string> = { responses: 'm-responses', anthropic: 'm-anthropic' };
const PROTOCOLS: Protocol[] = ['responses', 'anthropic'];

const TOOL_OUTPUT = forecast('Hangzhou');

describe('e2e: stateful Responses through the OpenAI Agents SDK', function () {
  this.timeout(60_000);
  let gateway: KeyedGateway;

  before(async () => {
    setTracingDisabled(true);
    gateway = await startKeyedGateway({ responses: true });
  });

  after(async () => {
    await gateway?.close();
  });

  beforeEach(() => {
    for (const protocol of PROTOCOLS) fake(protocol).unscript();
  });

  const fake = (protocol: Protocol): FakeUpstream => (protocol === 'responses' ? gateway.fakes.responses! : gateway.fakes[protocol]);

  /** A client on the gateway, a Runner using it, and what they send. */
  function connect() {
    const { fetch, sent } = recordingFetch();
    const client = new OpenAI({ apiKey: gateway.secret, baseURL: `${gateway.t.baseUrl}/v1`, maxRetries: 0, fetch });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client }) });
    const responsesCalls = (): SentRequest[] => sent.filter((request) => request.method === 'POST' && request.path === '/v1/responses');
    return { client, runner, sent, responsesCalls };
  }

  const upstreamTurns = (protocol: Protocol): string[] => transcript(protocol, fake(protocol).requests.at(-1)!.body);

  for (const protocol of PROTOCOLS) {
    describe(`on the ${protocol} upstream`, () => {
      it('OpenAIConversationsSession: run 2 reads run 1 (tool loop included) from the conversation, and the upstream gets it all', async () => {
        const callId = `call_session_${protocol}`;
        fake(protocol).script(
          { toolUse: { id: callId, name: 'get_weather', input: { city: 'Hangzhou' } } },
          { text: 'Hangzhou: 18°C with light rain.' },
          { text: 'Yes, take an umbrella.' },
        );
        const { client, runner, sent } = connect();
        const session = new OpenAIConversationsSession({ client });
        const asked: string[] = [];
        const agent = weatherAgent(MODEL[protocol], asked);

        const run1 = await runner.run(agent, 'What is the weather in Hangzhou?', { session });
        expect(run1.finalOutput).to.equal('Hangzhou: 18°C with light rain.');
        const run2 = await runner.run(agent, 'Should I take an umbrella?', { session });
        expect(run2.finalOutput).to.equal('Yes, take an umbrella.');
        expect(asked).to.deep.equal(['Hangzhou']);

        expect(upstreamTurns(protocol), 'run 2 at the upstream').to.deep.equal([
          'user:What is the weather in Hangzhou?',
          `call:${callId}:get_weather`,
          `result:${callId}:${TOOL_OUTPUT}`,
          'assistant:Hangzhou: 18°C with light rain.',
          'user:Should I take an umbrella?',
        ]);
        const conversationId = await session.getSessionId();
        expect(conversationId).to.match(/^conv_/);
        expect(sent.some((request) => request.method === 'POST' && request.path === `/v1/conversations/${conversationId}/items`)).to.equal(true);
        const kept = (await session.getItems()).map((item) => ('role' in item ? item.role : item.type));
        expect(kept).to.deep.equal(['user', 'function_call', 'function_call_result', 'assistant', 'user', 'assistant']);

        await session.clearSession();
        await expectApiError(() => client.conversations.retrieve(conversationId), OpenAI.NotFoundError, 404, 'x-request-id');
      });

      it('previousResponseId: run 2 (streamed, with a tool loop) sends only what is new, and the upstream gets run 1 as well', async () => {
        const callId = `call_previous_${protocol}`;
        fake(protocol).script(
          { text: 'Hello Ada, noted that you live in Hangzhou.' },
          { toolUse: { id: callId, name: 'get_weather', input: { city: 'Hangzhou' } } },
          { text: 'Light rain where you live, Ada.' },
        );
        const { runner, responsesCalls } = connect();
        const asked: string[] = [];
        const agent = weatherAgent(MODEL[protocol], asked);

        const run1 = await runner.run(agent, 'I am Ada and I live in Hangzhou.');
        expect(run1.lastResponseId).to.be.a('string');
        const run2 = await runner.run(agent, 'What is the weather where I live?', { previousResponseId: run1.lastResponseId, stream: true });
        await run2.completed;
        expect(run2.error ?? null).to.equal(null);
        expect(run2.finalOutput).to.equal('Light rain where you live, Ada.');
        expect(asked).to.deep.equal(['Hangzhou']);

        // The SDK chains by id: run 2's calls carry previous_response_id, the second only the tool output.
        const [, run2Call1, run2Call2] = responsesCalls();
        expect(run2Call1?.body.previous_response_id).to.equal(run1.lastResponseId);
        expect(run2Call2?.body.previous_response_id).to.be.a('string').and.not.equal(run1.lastResponseId);
        expect(transcript('responses', run2Call2?.body)).to.deep.equal([`result:${callId}:${TOOL_OUTPUT}`]);

        expect(upstreamTurns(protocol), 'run 2, call 2 at the upstream').to.deep.equal([
          'user:I am Ada and I live in Hangzhou.',
          'assistant:Hello Ada, noted that you live in Hangzhou.',
          'user:What is the weather where I live?',
          `call:${callId}:get_weather`,
          `result:${callId}:${TOOL_OUTPUT}`,
        ]);
        expect(run2.lastResponseId).to.be.a('string').and.not.equal(run1.lastResponseId);
      });

      it('conversationId: a server-managed conversation carries run 1 into run 2', async () => {
        fake(protocol).script({ text: 'Hello Ada.' }, { text: 'You are Ada.' });
        const { client, runner, responsesCalls } = connect();
        const conversation = await client.conversations.create({});
        const agent = weatherAgent(MODEL[protocol], []);

        await runner.run(agent, 'My name is Ada.', { conversationId: conversation.id });
        const run2 = await runner.run(agent, 'What is my name?', { conversationId: conversation.id });
        expect(run2.finalOutput).to.equal('You are Ada.');
        expect(responsesCalls().map((request) => request.body.conversation)).to.deep.equal([conversation.id, conversation.id]);
        expect(upstreamTurns(protocol)).to.deep.equal(['user:My name is Ada.', 'assistant:Hello Ada.', 'user:What is my name?']);
      });
    });
  }
});
