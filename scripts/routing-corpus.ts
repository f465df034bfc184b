// The labelled routing corpus (test/fixtures/routing/): loading, turning an
// item into the canonical request the gateway would assess, and the one-time
// split into train, dev and test. Shared by `npm run train:routing`,
// `npm run eval:routing`, the unit test that holds the targets, and the bench.
//
// The test split is for reporting only: nothing that tunes the assessor (the
// training script's fit, its choice of regularisation and of cut points)
// reads it.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CanonicalContent, CanonicalMessage, CanonicalRequest, CanonicalTool } from '../src/core/canonical';
import { decodeChatRequest, type ChatCompletionRequest } from '../src/data-plane/chat/chat.decoder';
import { decodeMessagesRequest, type MessagesRequest } from '../src/data-plane/messages/messages.decoder';
import { decodeResponsesRequest, type ResponsesRequest } from '../src/data-plane/responses/responses.decoder';
import { DEFAULT_MAX_TOKENS } from '../src/routing/catalog';
import { TIERS, type Tier } from '../src/core/catalog.types';

export type Split = 'train' | 'dev' | 'test';
export type Lang = 'zh' | 'en';

/** A corpus line as written: `split` may be left out, and is then drawn by assignSplits. */
type CorpusLine = Omit<CorpusItem, 'split'> & { split?: Split };

export interface CorpusItem {
  id: string;
  lang: Lang;
  tier: Tier;
  domain: string;
  kind: string;
  /** One line: why this tier, under the labelling rule in the corpus README. */
  reason: string;
  /** The latest ask; `{{name}}` pulls in attachments/name.txt (long pastes). */
  prompt: string;
  system?: string;
  /** Prior exchanges of ordinary filler chat before the prompt. */
  turns?: number;
  /** Earlier exchanges written out, [user, assistant] each, after any filler and before the prompt: the work a follow-up carries on. */
  history?: Array<[user: string, assistant: string]>;
  max_tokens?: number;
  thinking?: 'enabled' | 'adaptive' | 'disabled';
  /**
   * An agent turn: `rounds` earlier tool rounds, and optionally the latest
   * tool result (`failed`: the tool failed). With `harness`, the body that
   * harness sends, from its capture in harness/; without, a synthetic Claude
   * Code turn (its system prompt and twelve tools, a memory reminder).
   */
  agent?: { harness?: Harness; result?: string; rounds?: number; failed?: boolean };
  split: Split;
}

export const CORPUS_DIR = fileURLToPath(new URL('../test/fixtures/routing/', import.meta.url));
export const CORPUS_PATH = path.join(CORPUS_DIR, 'corpus.jsonl');
/** The request bodies recorded from real agent harnesses (scripts/capture-harness.ts). */
export const HARNESS_DIR = path.join(CORPUS_DIR, 'harness');

export const HARNESSES = ['claude-code', 'codex', 'langchain'] as const;
export type Harness = (typeof HARNESSES)[number];
/** The request form each harness speaks: Claude Code Messages, Codex Responses, LangChain (ChatOpenAI) chat completions. */
export type HarnessForm = 'messages' | 'responses' | 'chat';

type Json = Record<string, unknown>;

/**
 * What scripts/capture-harness.ts recorded from a real harness: the first
 * body it sent (the ask as `{{ask}}`), and each tool round it appended after
 * that (the assistant's tool call and the tool's output as `{{result}}`).
 */
export interface HarnessCapture {
  harness: Harness;
  form: HarnessForm;
  /** The client that sent the bodies, with its version. */
  client: string;
  /** The first body: the ask, no tool round yet. */
  body: Json;
  /** The conversation up to the ask as the harness re-sends it once more follows, when that differs from `body`'s (Claude Code moves its cache marks). */
  resent?: unknown[];
  /** The cache mark the harness puts on the last block of the last message (Messages form). */
  cacheMark?: Json;
  /** The tool rounds, in the order recorded: the call's id, whether the tool failed, the messages (or input items) appended. */
  rounds: Array<{ id: string; failed: boolean; items: unknown[] }>;
}

/** What a harness body is composed of: the earlier exchanges, the ask, then tool rounds (a recorded round's index and the tool output to put in it). */
export interface HarnessTurn {
  history: ReadonlyArray<readonly [user: string, assistant: string]>;
  ask: string;
  rounds: ReadonlyArray<{ template: number; result: string }>;
}

/** Where a form keeps its conversation. */
export const conversationKey = (form: HarnessForm): 'messages' | 'input' => (form === 'responses' ? 'input' : 'messages');

/** A deep copy of `value` with each placeholder in its strings replaced. */
export function substitute<T>(value: T, replacements: Record<string, string>): T {
  const keys = Object.keys(replacements);
  return JSON.parse(JSON.stringify(value), (_, v: unknown) => (typeof v === 'string' ? keys.reduce((text, key) => text.replaceAll(key, () => replacements[key] ?? ''), v) : v)) as T;
}

function textTurn(form: HarnessForm, role: 'user' | 'assistant', text: string): Json {
  if (form === 'messages') return { role, content: [{ type: 'text', text }] };
  if (form === 'chat') return { role, content: text };
  return { type: 'message', role, content: [{ type: role === 'user' ? 'input_text' : 'output_text', text }] };
}

/**
 * The body a harness sends for `turn`: its recorded first body with the first
 * user words in place of the ask, the later exchanges appended as text turns,
 * then the tool rounds from the recorded ones (a round used again gets a new
 * call id). The Messages form's cache mark goes on the last block, where
 * Claude Code puts it.
 */
export function harnessBody(capture: HarnessCapture, turn: HarnessTurn): Json {
  const key = conversationKey(capture.form);
  const appended = turn.history.length > 0 || turn.rounds.length > 0;
  const recorded = (appended ? capture.resent : undefined) ?? (capture.body[key] as unknown[]);
  const conversation = substitute(recorded, { '{{ask}}': turn.history[0]?.[0] ?? turn.ask });
  turn.history.forEach(([, answer], i) => conversation.push(textTurn(capture.form, 'assistant', answer), textTurn(capture.form, 'user', turn.history[i + 1]?.[0] ?? turn.ask)));
  turn.rounds.forEach(({ template, result }, i) => {
    const round = capture.rounds[template];
    if (!round) throw new Error(`${capture.harness} capture: no tool round ${template}`);
    const id = template === i ? round.id : `${round.id}_${i}`;
    conversation.push(...substitute(round.items, { '{{result}}': result, [round.id]: id }));
  });
  if (appended && capture.cacheMark) {
    const content = (conversation.at(-1) as Json | undefined)?.content;
    const last = Array.isArray(content) ? (content.at(-1) as Json | undefined) : undefined;
    if (last) last.cache_control = capture.cacheMark;
  }
  return { ...capture.body, [key]: conversation };
}

export function loadCorpus(file: string = CORPUS_PATH): CorpusItem[] {
  const items = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      const item = JSON.parse(line) as CorpusLine;
      if (!TIERS.includes(item.tier)) throw new Error(`${file}:${index + 1}: tier ${JSON.stringify(item.tier)} is not one of ${TIERS.join(', ')}`);
      const harness = item.agent?.harness;
      if (harness !== undefined && !HARNESSES.includes(harness)) throw new Error(`${file}:${index + 1}: agent.harness ${JSON.stringify(harness)} is not one of ${HARNESSES.join(', ')}`);
      // A harness sends its own system prompt, output bound and thinking setting: an item cannot set them.
      const fixed = harness === undefined ? undefined : (['system', 'max_tokens', 'thinking'] as const).find((field) => item[field] !== undefined);
      if (fixed) throw new Error(`${file}:${index + 1}: ${fixed} cannot be set on an agent.harness item: the harness's capture sets it`);
      return item;
    });
  const ids = new Set<string>();
  for (const item of items) {
    if (ids.has(item.id)) throw new Error(`${file}: duplicate id ${item.id}`);
    ids.add(item.id);
  }
  // An operator's new lines may leave `split` out: they get one by the rule the corpus was split with.
  return assignSplits(items);
}

let attachments: Map<string, string> | undefined;
function attachment(name: string): string {
  attachments ??= new Map(
    readdirSync(path.join(CORPUS_DIR, 'attachments')).map((file) => [file.replace(/\.[a-z]+$/, ''), readFileSync(path.join(CORPUS_DIR, 'attachments', file), 'utf8')]),
  );
  const text = attachments.get(name);
  if (text === undefined) throw new Error(`routing corpus: no attachment ${name}`);
  return text;
}

const expand = (text: string): string => text.replace(/\{\{([a-z0-9-]+)\}\}/g, (_, name: string) => attachment(name).trimEnd());

// Filler for synthesised history: ordinary chat that carries length but no
// cue of its own, so an item's label depends on its prompt and not on filler.
const FILLER: Record<Lang, ReadonlyArray<readonly [user: string, assistant: string]>> = {
  en: [
    ['Thanks, that makes sense. Can you say a bit more about the second point?', 'Sure. The second point mostly matters when the situation changes over time. In practice people handle it by checking in regularly and adjusting as they go, rather than fixing everything up front.'],
    ['Okay. And what about the timing, is earlier better?', 'Usually, yes. Starting earlier gives you more room to react if something goes wrong, although it is not a hard rule and it depends on how much flexibility you have.'],
    ['Got it. Let me note that down.', 'Good idea. Let me know when you are ready to continue or if anything in the notes is unclear.'],
    ['One more thing I forgot to mention: the budget is a little tighter than I said.', 'Thanks for telling me. That does not change the overall direction, but we may want to leave out a couple of the optional parts and keep a small reserve.'],
    ['Right, that sounds reasonable to me.', 'Great. Then we can keep the rest as it is and only adjust the details when you have more information.'],
  ],
  zh: [
    ['明白了，谢谢。第二点能再说详细一点吗？', '当然可以。第二点主要在情况发生变化的时候比较重要。实际中大家一般会定期看一下进展，再根据情况调整，而不是一开始就全部定死。'],
    ['好的。那时间上是越早越好吗？', '一般来说是的。早一点开始，遇到问题的时候回旋的余地更大，不过这也不是绝对的，要看你那边的时间安排有多灵活。'],
    ['收到，我先记一下。', '好的。记完了随时告诉我，有哪里不清楚的也可以再问。'],
    ['还有一件事忘了说，预算比我之前说的要紧一些。', '谢谢提醒。整体方向不用变，只是可能要去掉一两个可选的部分，再留一点余量。'],
    ['嗯，我觉得这样挺合理的。', '太好了。那其他部分先保持不变，等你有了更多信息我们再调整细节。'],
  ],
};

/** What Claude Code puts in its first user turn before the ask: project memory, as a system reminder. */
const MEMORY_REMINDER =
  '<system-reminder>\nAs you answer the user\'s questions, you can use the following context:\n# claudeMd\nCodebase and user instructions are shown below. Be sure to adhere to these instructions.\n\nContents of /home/dev/projects/billing-service/CLAUDE.md (project instructions, checked into the codebase):\n\n# Billing service\n- TypeScript, Node 20, PostgreSQL via pg. Run `npm test` (jest) and `npm run lint` before committing.\n- Money is stored in minor units; never use floats for amounts in new code.\n- Keep SQL in the repository files; parameterise every query.\n\nIMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>';

let agentKit: { system: string; tools: CanonicalTool[] } | undefined;
function agentScaffold(): { system: string; tools: CanonicalTool[] } {
  if (agentKit) return agentKit;
  const tools = JSON.parse(attachment('agent-tools')) as Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
  agentKit = {
    // Claude Code's system prompt runs to tens of kilobytes: its instructions, then the environment and the files it was shown.
    system: `${attachment('agent-system')}\n\n${attachment('code-ts')}\n\n${attachment('agent-system')}`,
    tools: tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.input_schema, kind: 'custom' })),
  };
  return agentKit;
}

const text = (value: string): CanonicalContent => ({ type: 'text', text: value });

const captures = new Map<Harness, HarnessCapture>();
export function harnessCapture(harness: Harness): HarnessCapture {
  let capture = captures.get(harness);
  if (!capture) {
    capture = JSON.parse(readFileSync(path.join(HARNESS_DIR, `${harness}.json`), 'utf8')) as HarnessCapture;
    captures.set(harness, capture);
  }
  return capture;
}

/**
 * An agent item as its harness sends it, decoded by the gateway's decoder of
 * that form (what the assessor sees in production): the filler and written-out
 * exchanges, the ask, `rounds` earlier tool rounds each reading a file, then
 * the latest tool result, from a failed round of the capture if `failed`.
 */
function harnessRequest(item: CorpusItem, harness: Harness): CanonicalRequest {
  const capture = harnessCapture(harness);
  const filler = FILLER[item.lang];
  const history: Array<readonly [string, string]> = [
    ...Array.from({ length: item.turns ?? 0 }, (_, i) => filler[i % filler.length] ?? (['', ''] as const)),
    ...(item.history ?? []).map(([user, answer]) => [expand(user), answer] as const),
  ];
  const ok = capture.rounds.flatMap((round, index) => (round.failed ? [] : [index]));
  const failed = capture.rounds.findIndex((round) => round.failed);
  const rounds = Array.from({ length: item.agent?.rounds ?? 0 }, (_, i) => ({ template: ok[i % ok.length] ?? 0, result: attachment('code-ts') }));
  if (item.agent?.result !== undefined) rounds.push({ template: item.agent.failed ? failed : (ok[rounds.length % ok.length] ?? 0), result: expand(item.agent.result) });
  const body = harnessBody(capture, { history, ask: expand(item.prompt), rounds });
  switch (capture.form) {
    case 'messages':
      return decodeMessagesRequest(body as unknown as MessagesRequest);
    case 'responses':
      return decodeResponsesRequest(body as unknown as ResponsesRequest, DEFAULT_MAX_TOKENS);
    case 'chat':
      return decodeChatRequest(body as unknown as ChatCompletionRequest, DEFAULT_MAX_TOKENS);
  }
}

/** The canonical request a client would send for this item (what the assessor sees). */
export function toRequest(item: CorpusItem): CanonicalRequest {
  if (item.agent?.harness !== undefined) return harnessRequest(item, item.agent.harness);
  const messages: CanonicalMessage[] = [];
  const filler = FILLER[item.lang];
  for (let i = 0; i < (item.turns ?? 0); i += 1) {
    const pair = filler[i % filler.length];
    if (pair === undefined) continue;
    messages.push({ role: 'user', content: [text(pair[0])] }, { role: 'assistant', content: [text(pair[1])] });
  }
  let system = item.system;
  let tools: CanonicalTool[] | undefined;
  // The user words in order: the written-out history, then the prompt. An agent's first user turn also carries its memory reminder.
  const asks = [...(item.history ?? []).map(([user, assistant]) => [expand(user), assistant] as const), [expand(item.prompt), undefined] as const];
  if (item.agent) {
    const kit = agentScaffold();
    system = kit.system;
    tools = kit.tools;
  }
  asks.forEach(([user, assistant], index) => {
    const reminder = item.agent && index === 0 ? [text(MEMORY_REMINDER)] : [];
    messages.push({ role: 'user', content: [...reminder, text(user)] });
    if (assistant !== undefined) messages.push({ role: 'assistant', content: [text(assistant)] });
  });
  if (item.agent) {
    const rounds = item.agent.rounds ?? 0;
    for (let i = 0; i < rounds; i += 1) {
      const id = `toolu_${item.id}_${i}`;
      messages.push(
        { role: 'assistant', content: [text('Let me look at the code first.'), { type: 'tool_use', id, name: 'Read', input: { file_path: '/home/dev/projects/billing-service/src/billing/invoice-service.ts' } }] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: id, content: [text(attachment('code-ts'))] }] },
      );
    }
    if (item.agent.result !== undefined) {
      const id = `toolu_${item.id}_last`;
      messages.push(
        { role: 'assistant', content: [{ type: 'tool_use', id, name: 'Bash', input: { command: 'git status && git diff --stat', description: 'Check the working tree' } }] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: id, content: [text(expand(item.agent.result))] }] },
      );
    }
  }
  return {
    model: 'eval',
    ...(system === undefined ? {} : { system }),
    messages,
    maxTokens: item.max_tokens ?? DEFAULT_MAX_TOKENS,
    stream: false,
    ...(tools ? { tools } : {}),
    ...(item.thinking ? { thinking: { type: item.thinking } } : {}),
  };
}

/**
 * The split was assigned once, when the corpus was written, and is committed
 * in each item's `split` field. This is how it was drawn, so items added later
 * get a split the same way: within each (tier, language) group, items ordered
 * by a hash of their id, the first 60% train, the next 20% dev, the rest test.
 */
export function assignSplits<T extends { id: string; tier: Tier; lang: Lang; split?: Split }>(items: T[]): Array<T & { split: Split }> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = `${item.tier}/${item.lang}`;
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  const splitOf = new Map<string, Split>();
  for (const group of groups.values()) {
    const ordered = [...group].sort((a, b) => hashId(a.id).localeCompare(hashId(b.id)));
    ordered.forEach((item, index) => {
      const share = index / ordered.length;
      splitOf.set(item.id, share < 0.6 ? 'train' : share < 0.8 ? 'dev' : 'test');
    });
  }
  return items.map((item) => ({ ...item, split: item.split ?? splitOf.get(item.id) ?? 'train' }));
}

const hashId = (id: string): string => createHash('sha256').update(`routing-split-v1:${id}`).digest('hex');
