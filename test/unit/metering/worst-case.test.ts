// docs/architecture.md §9, issue 27: the worst case admission reserves covers every input
// the upstream can add, in all three forms, read from the caller's body: the
// body's bytes, a prompt overhead by feature (no longer a flat 2,048 tokens),
// an allowance per hosted tool, file, image or stored prompt (the largest for
// anything unknown that can add input), one more reading of the prompt per
// sampling of a hosted-tool loop, cache writes at their factor, and the one
// output bound the upstream is sent.
import { expect } from 'chai';
import type { CanonicalRequest, RawObject } from '../../../src/core/canonical';
import { decodeChatRequest, type ChatCompletionRequest } from '../../../src/data-plane/chat/chat.decoder';
import { decodeMessagesRequest, type MessagesRequest } from '../../../src/data-plane/messages/messages.decoder';
import { decodeResponsesRequest, type ResponsesRequest } from '../../../src/data-plane/responses/responses.decoder';
import { DEFAULT_INPUT_ALLOWANCES } from '../../../src/core/input-allowances';
import { FETCH_RESULT_OVERHEAD_TOKENS, FILE_SEARCH_RESULT_TOKENS } from '../../../src/metering/input-scan.types';
import { BASE_PROMPT_OVERHEAD_TOKENS, UPSTREAM_INSTRUCTIONS_TOKENS, worstCase } from '../../../src/metering/worst-case';
import { anthropicBody } from '../../../src/providers/anthropic/anthropic-request.mapper';
import { BUILTIN_PRICES } from '../../../src/routing/builtin-catalog';
import { parseCatalog } from '../../../src/routing/catalog';
import type { Deployment } from '../../../src/core/catalog.types';

function catalogWith(extra: { claude?: Record<string, unknown>; gpt?: Record<string, unknown> } = {}) {
  return parseCatalog(
    {
      currency: 'CNY',
      prices: BUILTIN_PRICES,
      providers: {
        claude: { type: 'anthropic', base_url: 'https://anthropic.example' },
        gpt: { type: 'openai', base_url: 'https://openai.example/v1', responses: true },
      },
      models: [
        {
          name: 'm',
          routes: { standard: [{ provider: 'claude', model: 'claude-x', ...extra.claude }], heavy: [{ provider: 'gpt', model: 'gpt-x', ...extra.gpt }] },
        },
      ],
    },
    {},
    'test',
  );
}

const catalog = catalogWith();
const model = catalog.modelsByName.get('m')!;
const claude = model.routes.standard[0]!;
const gpt = model.routes.heavy[0]!;

const messages = (body: Record<string, unknown>): CanonicalRequest =>
  decodeMessagesRequest({ model: 'm', max_tokens: 256, messages: [{ role: 'user', content: 'Look this up.' }], ...body } as MessagesRequest);
const chat = (body: Record<string, unknown>): CanonicalRequest =>
  decodeChatRequest({ model: 'm', max_tokens: 256, messages: [{ role: 'user', content: 'Look this up.' }], ...body } as ChatCompletionRequest, 4096);
const responses = (body: Record<string, unknown>): CanonicalRequest =>
  decodeResponsesRequest({ model: 'm', max_output_tokens: 256, input: 'Look this up.', ...body } as ResponsesRequest, 4096);
/** A request whose body the decoder would refuse today (stateful fields: the store's work), scanned as sent. */
const withBody = (request: CanonicalRequest, body: RawObject): CanonicalRequest => ({ ...request, source: { ...request.source!, body } });

const bytesOf = (request: CanonicalRequest): number => Buffer.byteLength(JSON.stringify(request.source!.body));

function reserve(request: CanonicalRequest, deployments: readonly Deployment[] = [claude], at = catalog) {
  return worstCase({ request, deployments, prices: at.prices, bodyBytes: bytesOf(request), redactions: 0, thinkingRoute: false });
}

interface Expected {
  /** Features for which the upstream adds instructions. */
  instructions?: number;
  /** Allowances of one sampling's prompt (files, images, definitions). */
  perPass?: number;
  /** Allowances of hosted results, once per call. */
  once?: number;
  samplings?: number;
  /** Results the request's own bounds prove, read by every later sampling. */
  proven?: number;
  output?: number;
}

/**
 * The reservation at unify 1 and the no-thinking prices of `catalog.example.json`: input at the
 * miss price (2 micro-units a token) plus 5 for rounding (one unified token
 * in each input tier, and each tier's half-up), output at 8.
 */
function expected(request: CanonicalRequest, e: Expected): number {
  const samplings = e.samplings ?? 1;
  const output = e.output ?? request.maxTokens;
  const prompt = bytesOf(request) + BASE_PROMPT_OVERHEAD_TOKENS + (e.instructions ?? 0) * UPSTREAM_INSTRUCTIONS_TOKENS + (e.perPass ?? 0);
  const input = samplings * prompt + (e.once ?? 0) + (e.proven ?? 0) * Math.max(1, samplings - 1) + (samplings - 1) * request.maxTokens;
  return 2 * input + 5 + 8 * output;
}

const A = DEFAULT_INPUT_ALLOWANCES;

describe('worst case', () => {
  describe('prompt overhead', () => {
    it('a tool-less call reserves its body and 64 tokens, not a flat 2,048', () => {
      const request = chat({});
      expect(reserve(request, [gpt]).micros).to.equal(expected(request, {}));
      // The body is 120-odd bytes: the input side is a fifth of what the flat overhead reserved.
      expect(2 * (bytesOf(request) + 64)).to.be.below((2 * (bytesOf(request) + 2_048)) / 5);
    });

    it('tools add the tool-use instructions once, and Anthropic-defined tools their documented definitions', () => {
      const custom = { name: 'lookup', input_schema: { type: 'object' } };
      const plain = messages({ tools: [custom] });
      expect(reserve(plain).micros).to.equal(expected(plain, { instructions: 1 }));
      const builtIn = messages({
        tools: [
          custom,
          { type: 'bash_20250124', name: 'bash' },
          { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
          { type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 },
          { type: 'memory_20250818', name: 'memory' },
        ],
      });
      expect(reserve(builtIn).micros).to.equal(expected(builtIn, { instructions: 1, perPass: 245 + 700 + 1_234 + 1_000 }));
    });

    it('structured output and citations add instructions of their own', () => {
      const request = messages({
        output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Notes.' }, citations: { enabled: true } }] }],
      });
      expect(reserve(request).micros).to.equal(expected(request, { instructions: 2 }));
    });
  });

  describe('inputs the upstream adds, in every form', () => {
    const cases: Array<[string, () => CanonicalRequest, Expected, Deployment?]> = [
      ['Responses web_search', () => responses({ tools: [{ type: 'web_search' }] }), { instructions: 1, once: A.web_search, samplings: 10 }, gpt],
      ['Responses web_search_preview', () => responses({ tools: [{ type: 'web_search_preview' }] }), { instructions: 1, once: A.web_search, samplings: 10 }, gpt],
      ['Responses file_search', () => responses({ tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }), { instructions: 1, once: A.file_search, samplings: 10 }, gpt],
      ['Responses mcp', () => responses({ tools: [{ type: 'mcp', server_label: 'x', server_url: 'https://mcp.example' }] }), { instructions: 1, once: A.mcp, samplings: 10 }, gpt],
      ['Responses code_interpreter', () => responses({ tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }), { instructions: 1, once: A.code_execution, samplings: 10 }, gpt],
      ['Responses image_generation', () => responses({ tools: [{ type: 'image_generation' }] }), { instructions: 1, once: A.image_generation, samplings: 10 }, gpt],
      [
        'Responses input_file by URL and input_image by file id',
        () =>
          responses({
            input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://files.example/a.pdf' }, { type: 'input_image', file_id: 'file-1' }, { type: 'input_text', text: 'Compare.' }] }],
          }),
        { perPass: A.document + A.image },
        gpt,
      ],
      ['Responses stored prompt', () => responses({ prompt: { id: 'pmpt_1', version: '2' } }), { perPass: A.prompt }, gpt],
      [
        'Responses local shell, apply_patch and computer use (client-run: their definitions)',
        () => responses({ tools: [{ type: 'local_shell' }, { type: 'apply_patch' }, { type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' }] }),
        { instructions: 1, perPass: 2 * A.shell + A.computer },
        gpt,
      ],
      ['chat web_search_options', () => chat({ web_search_options: {} }), { once: A.web_search, samplings: 10 }, gpt],
      [
        'chat file by id and image by URL',
        () => chat({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }, { type: 'image_url', image_url: { url: 'https://img.example/a.png' } }] }] }),
        { perPass: A.document + A.image },
        gpt,
      ],
      ['Messages web_search', () => messages({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), { instructions: 1, once: A.web_search, samplings: 10 }],
      ['Messages web_search with max_uses 2', () => messages({ tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }] }), { instructions: 1, once: A.web_search, samplings: 3 }],
      ['Messages web_fetch', () => messages({ tools: [{ type: 'web_fetch_20250910', name: 'web_fetch' }] }), { instructions: 1, once: A.web_fetch, samplings: 10 }],
      [
        'Messages web_fetch bounded by max_uses × max_content_tokens (a proof, not the policy figure)',
        () => messages({ tools: [{ type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2, max_content_tokens: 5_000 }] }),
        { instructions: 1, proven: 2 * (5_000 + FETCH_RESULT_OVERHEAD_TOKENS), samplings: 3 },
      ],
      ['Messages code_execution', () => messages({ tools: [{ type: 'code_execution_20250825', name: 'code_execution' }] }), { instructions: 1, once: A.code_execution, samplings: 10 }],
      [
        'Messages mcp_servers (one allowance per server)',
        () => messages({ mcp_servers: [{ type: 'url', url: 'https://a.example/mcp', name: 'a' }, { type: 'url', url: 'https://b.example/mcp', name: 'b' }] }),
        { once: 2 * A.mcp, samplings: 10 },
      ],
      [
        'Messages container_upload, a document by URL and an inline image',
        () =>
          messages({
            messages: [
              {
                role: 'user',
                content: [
                  { type: 'container_upload', file_id: 'file_1' },
                  { type: 'document', source: { type: 'url', url: 'https://files.example/a.pdf' } },
                  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
                  { type: 'text', text: 'Read these.' },
                ],
              },
            ],
          }),
        { perPass: 2 * A.document + A.image },
      ],
      [
        'Responses file_search bounded by max_num_results and max_tool_calls',
        () => responses({ max_tool_calls: 2, tools: [{ type: 'file_search', vector_store_ids: ['vs_1'], max_num_results: 5 }] }),
        { instructions: 1, proven: 2 * 5 * FILE_SEARCH_RESULT_TOKENS, samplings: 3 },
        gpt,
      ],
      ['Responses max_tool_calls bounds the samplings', () => responses({ max_tool_calls: 3, tools: [{ type: 'web_search' }] }), { instructions: 1, once: A.web_search, samplings: 4 }, gpt],
      ['an unknown Responses tool: the largest allowance, and a loop', () => responses({ tools: [{ type: 'quantum_search' }] }), { instructions: 1, once: A.document, samplings: 10 }, gpt],
      ['an unknown Messages server tool', () => messages({ tools: [{ type: 'deep_research_20260101', name: 'research' }] }), { instructions: 1, once: A.document, samplings: 10 }],
      [
        'an unknown content part that points at a URL: the largest allowance; one that does not: its bytes',
        () =>
          messages({
            messages: [{ role: 'user', content: [{ type: 'video', source: { type: 'url', url: 'https://v.example/a.mp4' } }, { type: 'sticker', emoji: 'ok' }, { type: 'text', text: 'See.' }] }],
          }),
        { perPass: A.document },
      ],
      [
        'stored context: previous_response_id and an item_reference',
        () => withBody(responses({}), { model: 'm', max_output_tokens: 256, previous_response_id: 'resp_1', input: [{ type: 'item_reference', id: 'msg_1' }] }),
        { perPass: 2 * A.document },
        gpt,
      ],
    ];
    for (const [title, make, e, deployment] of cases) {
      it(title, () => {
        const request = make();
        expect(reserve(request, [deployment ?? claude]).micros).to.equal(expected(request, e));
      });
    }

    it('a deployment may state tighter (or looser) allowances; the largest of its table serves anything unknown', () => {
      const tight = catalogWith({ gpt: { input_allowances: { web_search: 20_000, document: 50_000, mcp: 400_000 } } });
      const deployment = tight.modelsByName.get('m')!.routes.heavy[0]!;
      const search = responses({ tools: [{ type: 'web_search' }] });
      expect(reserve(search, [deployment], tight).micros).to.equal(expected(search, { instructions: 1, once: 20_000, samplings: 10 }));
      const unknown = responses({ tools: [{ type: 'quantum_search' }] });
      expect(reserve(unknown, [deployment], tight).micros).to.equal(expected(unknown, { instructions: 1, once: 400_000, samplings: 10 }));
    });

    it('absurd bounds in the request cost a reservation no limit covers, not an overflow (a 5xx)', () => {
      const request = messages({ tools: [{ type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 1e15, max_content_tokens: 1e15 }] });
      // 10^13 input tokens at 2 micro-units a token, at least.
      expect(reserve(request).micros).to.be.at.least(2e13);
    });

    it('the issue\'s call: one web_search whose upstream reported 150,000 input tokens fits its reservation', () => {
      const request = responses({ tools: [{ type: 'web_search' }] });
      const billed = 2 * 150_000 + 8 * 256;
      expect(reserve(request, [gpt]).micros).to.be.above(billed);
    });
  });

  describe('cache writes and output', () => {
    const cached = (ttl?: string) =>
      messages({ system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) } }] });

    it('input that can write the cache is reserved at the write factor: 1.25 × for 5 minutes, 2 × for an hour', () => {
      const plain = messages({ system: 'You are terse.' });
      const tokens = (request: CanonicalRequest) => bytesOf(request) + BASE_PROMPT_OVERHEAD_TOKENS;
      expect(reserve(plain).micros).to.equal(2 * tokens(plain) + 5 + 8 * 256);
      // Slack: one unified token per part metering rounds on its own (hit 1; miss 1 + 2 (⌈1.25⌉) [+ 2]) and 2 for the tiers' half-up.
      const fiveMinutes = cached();
      expect(reserve(fiveMinutes).micros).to.equal(2 * Math.ceil(1.25 * tokens(fiveMinutes)) + 1 + 2 * 3 + 2 + 8 * 256);
      const oneHour = cached('1h');
      expect(reserve(oneHour).micros).to.equal(4 * tokens(oneHour) + 1 + 2 * 5 + 2 + 8 * 256);
    });

    it('a chat prediction bills its rejected tokens as output: its bytes are reserved at the output price', () => {
      const request = chat({ prediction: { type: 'content', content: 'x'.repeat(1_000) } });
      expect(reserve(request, [gpt]).micros).to.equal(expected(request, { output: 256 + 1_000 }));
    });

    it('reserves exactly the max_tokens an Anthropic upstream is sent, a thinking budget the gateway sets included', () => {
      // reasoning_effort low on max_tokens 800: a 1,024-token budget, sent with max_tokens 1,824.
      const request = chat({ max_tokens: 800, reasoning_effort: 'low' });
      const sent = anthropicBody(request, claude, []).max_tokens;
      expect(sent).to.equal(1_824);
      // Thinking prices: input 4 (hit 1), output 16; thinking adds its instructions.
      const input = bytesOf(request) + BASE_PROMPT_OVERHEAD_TOKENS + UPSTREAM_INSTRUCTIONS_TOKENS;
      expect(reserve(request).micros).to.equal(4 * input + 7 + 16 * 1_824);
    });

    it('lowers max_tokens to the most that fits, never below 1,024', () => {
      const request = messages({ max_tokens: 8_000 });
      const worst = reserve(request);
      const at = (maxTokens: number) => expected({ ...request, maxTokens } as CanonicalRequest, { output: maxTokens });
      expect(worst.fitOutput(at(5_000) + 7)).to.deep.equal({ maxTokens: 5_000, micros: at(5_000) });
      expect(worst.fitOutput(at(1_024))).to.deep.equal({ maxTokens: 1_024, micros: at(1_024) });
      expect(worst.fitOutput(at(1_024) - 1)).to.equal(null);
    });
  });

  describe('unified tokens (a key\'s tokens-per-minute limit)', () => {
    it('bounds what the call can be metered: the prompt by its bytes, the overhead, and max_tokens, each at its unify factor', () => {
      const request = chat({ max_tokens: 1_000 });
      const prompt = bytesOf(request) + BASE_PROMPT_OVERHEAD_TOKENS;
      // The built-in factors are 1: the prompt, one token per rounded part, and the output bound.
      expect(reserve(request, [gpt]).tokens).to.equal(prompt + 2 + 1_000);
      // A larger max_tokens reserves more, token for token.
      expect(reserve(chat({ max_tokens: 3_000 }), [gpt]).tokens - reserve(request, [gpt]).tokens).to.equal(2_000);
      // A hosted-tool loop reads the prompt once per sampling.
      expect(reserve(responses({ tools: [{ type: 'web_search' }] }), [gpt]).tokens).to.be.above(10 * (prompt + UPSTREAM_INSTRUCTIONS_TOKENS));
    });
  });
});
