// `npm run capture:harness`: records the request bodies that real agent
// harnesses send, for the routing corpus (test/fixtures/routing/harness/).
//
// - Claude Code: the real CLI (`@anthropic-ai/claude-code`'s native binary),
//   `claude -p … --output-format json`, against a fake Anthropic upstream.
// - Codex: the real CLI (`@openai/codex`'s native binary), `codex exec --json`
//   with a custom provider (`wire_api = "responses"`), against a fake
//   Responses upstream.
// - LangChain: `@langchain/openai`'s ChatOpenAI with bound tools, run as a
//   tool-calling agent loop, against a fake Chat Completions upstream.
//
// Each fake answers with a tool call for three rounds (read the notes, read
// them again, read a file that does not exist: a failed tool result) and
// then a final answer, and records every body. The harness runs the tools in
// a scratch project that has an AGENTS.md and a CLAUDE.md, so its preambles
// are in the capture as it sends them.
//
// What is stored per harness (`{harness}.json`): the first body, with the
// ask replaced by `{{ask}}`, and the rounds that each later body appended:
// the assistant's tool call and the tool's result, with the result replaced
// by `{{result}}`, the failed one marked. The scratch directories' random
// names become /home/dev and /home/dev/project, so that a capture differs
// from the last one only where the harness changed. `toRequest` in
// scripts/routing-corpus.ts composes a corpus item's request from these.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChatOpenAI } from '@langchain/openai';
import { type AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { runCli } from '../test/support/cli-process';
import { startFakeAnthropic, startFakeOpenAI, startFakeOpenAIResponses, type FakeReply, type FakeUpstream } from '../test/support/fake-upstreams';
import { isDeepStrictEqual } from 'node:util';
import { HARNESS_DIR, conversationKey, harnessBody, type Harness, type HarnessCapture, type HarnessForm } from './routing-corpus';

/** The ask each harness is given; replaced by `{{ask}}` in the capture. */
const ASK = 'CAPTURE-ASK-7f3a: read notes.txt and tell me what it says';
/** What notes.txt holds; the tool results that show it have it replaced by `{{result}}`. */
const NOTES = 'CAPTURE-RESULT-5b1e';
const MISSING = 'missing-notes.txt';
const FINAL = 'The notes say what they say.';

const version = (name: string): string => (require(`${name}/package.json`) as { version: string }).version;
const CLIENTS: Record<Harness, () => string> = {
  'claude-code': () => `@anthropic-ai/claude-code ${version('@anthropic-ai/claude-code')}`,
  codex: () => `@openai/codex ${version('@openai/codex')}`,
  langchain: () => `@langchain/openai ${version('@langchain/openai')}`,
};

const require = createRequire(import.meta.url);

function claudeBinary(): string {
  const binary = path.join(path.dirname(require.resolve('@anthropic-ai/claude-code-linux-x64/package.json')), 'claude');
  if (!existsSync(binary)) throw new Error(`no Claude Code binary at ${binary}`);
  return binary;
}

function codexBinary(): string {
  const vendor = path.join(path.dirname(require.resolve('@openai/codex-linux-x64/package.json')), 'vendor');
  for (const triple of readdirSync(vendor)) {
    const binary = path.join(vendor, triple, 'bin', 'codex');
    if (existsSync(binary)) return binary;
  }
  throw new Error(`no Codex binary under ${vendor}`);
}

interface Scratch {
  home: string;
  work: string;
}

/** A small project the harness works in: a git repository with notes, an AGENTS.md and a CLAUDE.md. */
async function scratchProject(): Promise<Scratch> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'capture-home-'));
  const work = path.join(home, 'project');
  await mkdir(work);
  await writeFile(path.join(work, 'notes.txt'), `${NOTES}\n`);
  await writeFile(path.join(work, 'README.md'), '# billing-service\n\nInvoices, reminders and exports for the billing team.\n');
  const instructions =
    '# Project instructions\n\n- TypeScript on Node 22; run `npm test` and `npm run lint` before committing.\n- Money is stored in minor units; never use floats for amounts.\n- Keep SQL in the repository files and parameterise every query.\n';
  await writeFile(path.join(work, 'AGENTS.md'), instructions);
  await writeFile(path.join(work, 'CLAUDE.md'), instructions);
  const git = (...args: string[]) => spawnSync('git', args, { cwd: work, env: { PATH: process.env.PATH, HOME: home, GIT_AUTHOR_NAME: 'dev', GIT_AUTHOR_EMAIL: 'dev@example.com', GIT_COMMITTER_NAME: 'dev', GIT_COMMITTER_EMAIL: 'dev@example.com' } });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'Initial commit');
  return { home, work };
}

/** Three tool rounds (the last one fails), then the answer. */
function script(upstream: FakeUpstream, call: (round: number) => FakeReply['toolUse']): void {
  upstream.script(...[0, 1, 2].map((round) => ({ toolUse: call(round), usage: { input: 2000, output: 20 } })), { text: FINAL, usage: { input: 2400, output: 10 } });
}

async function captureClaudeCode(): Promise<{ bodies: unknown[]; scratch: Scratch }> {
  const scratch = await scratchProject();
  const upstream = await startFakeAnthropic();
  try {
    script(upstream, (round) =>
      round === 0
        ? { id: 'toolu_capture_0', name: 'Bash', input: { command: 'cat notes.txt', description: 'Show the notes' } }
        : round === 1
          ? { id: 'toolu_capture_1', name: 'Read', input: { file_path: path.join(scratch.work, 'notes.txt') } }
          : { id: 'toolu_capture_2', name: 'Bash', input: { command: `cat ${MISSING}`, description: 'Show the other notes' } },
    );
    const run = await runCli(
      claudeBinary(),
      ['-p', ASK, '--output-format', 'json', '--allowedTools', 'Bash(cat:*)', 'Read'],
      { HOME: scratch.home, ANTHROPIC_BASE_URL: upstream.origin, ANTHROPIC_AUTH_TOKEN: 'capture-token', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
      scratch.work,
      120_000,
    );
    if (run.code !== 0) throw new Error(`claude exited ${String(run.code)}: ${run.stderr || run.stdout}`);
    return { bodies: upstream.requests.filter((r) => r.path.split('?')[0] === '/v1/messages').map((r) => r.body), scratch };
  } finally {
    await upstream.close();
  }
}

async function captureCodex(): Promise<{ bodies: unknown[]; scratch: Scratch }> {
  const scratch = await scratchProject();
  const upstream = await startFakeOpenAIResponses();
  try {
    script(upstream, (round) => ({ id: `call_capture_${round}`, name: 'exec_command', input: { cmd: round === 2 ? `cat ${MISSING}` : 'cat notes.txt' } }));
    const config = `model = "gpt-5-codex"\nmodel_provider = "capture"\ncheck_for_update_on_startup = false\n\n[model_providers.capture]\nname = "capture"\nbase_url = "${upstream.baseUrl}"\nwire_api = "responses"\nenv_key = "CAPTURE_API_KEY"\n`;
    await writeFile(path.join(scratch.home, 'config.toml'), config);
    const run = await runCli(
      codexBinary(),
      ['exec', '--json', '--sandbox', 'read-only', ASK],
      { HOME: scratch.home, CODEX_HOME: scratch.home, CAPTURE_API_KEY: 'capture-token' },
      scratch.work,
      120_000,
    );
    if (run.code !== 0) throw new Error(`codex exited ${String(run.code)}: ${run.stderr || run.stdout}`);
    return { bodies: upstream.requests.filter((r) => r.path === '/v1/responses').map((r) => r.body), scratch };
  } finally {
    await upstream.close();
  }
}

/** A LangChain tool-calling agent as its docs write one: a system prompt, bound tools, the loop run by hand. */
async function captureLangChain(): Promise<{ bodies: unknown[]; scratch: Scratch }> {
  const scratch = await scratchProject();
  const upstream = await startFakeOpenAI();
  try {
    script(upstream, (round) => ({ id: `call_capture_${round}`, name: 'read_file', input: { path: round === 2 ? MISSING : 'notes.txt' } }));
    const readFile = tool(
      async ({ path: file }: { path: string }) => {
        const { readFile: read } = await import('node:fs/promises');
        return read(path.join(scratch.work, file), 'utf8');
      },
      { name: 'read_file', description: 'Read a text file of the project, by its path relative to the project root.', schema: z.object({ path: z.string().describe('the file, relative to the project root') }) },
    );
    const listFiles = tool(async () => readdirSync(scratch.work).join('\n'), { name: 'list_files', description: 'List the files at the project root.', schema: z.object({}) });
    const tools = [readFile, listFiles];
    const model = new ChatOpenAI({ apiKey: 'capture-token', configuration: { baseURL: upstream.baseUrl }, model: 'gpt-4o', maxRetries: 0 }).bindTools(tools);
    const messages: BaseMessage[] = [new SystemMessage('You are a helpful coding assistant for the billing-service repository. Use the tools to look at files before you answer.'), new HumanMessage(ASK)];
    for (let step = 0; step < 6; step += 1) {
      const reply = (await model.invoke(messages)) as AIMessage;
      messages.push(reply);
      if (!reply.tool_calls?.length) break;
      for (const call of reply.tool_calls) {
        const chosen = tools.find((t) => t.name === call.name);
        let content: string;
        try {
          content = String(await (chosen as typeof readFile).invoke(call.args as { path: string }));
        } catch (error) {
          // As LangGraph's ToolNode reports a failed tool to the model.
          content = `Error: ${(error as Error).message}\n Please fix your mistakes.`;
        }
        messages.push(new ToolMessage({ tool_call_id: call.id ?? '', content, status: content.startsWith('Error: ') ? 'error' : 'success' }));
      }
    }
    return { bodies: upstream.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body), scratch };
  } finally {
    await upstream.close();
  }
}

export async function main(): Promise<void> {
  // `--raw dir` also writes every recorded body, unsplit, for a look at what changed.
  const rawAt = process.argv.indexOf('--raw');
  const rawDir = rawAt > 0 ? process.argv[rawAt + 1] : undefined;
  const only = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith('-') && all[i - 1] !== '--raw') as Harness[];
  const runs: Record<Harness, () => Promise<{ bodies: unknown[]; scratch: Scratch }>> = { 'claude-code': captureClaudeCode, codex: captureCodex, langchain: captureLangChain };
  await mkdir(HARNESS_DIR, { recursive: true });
  for (const harness of Object.keys(runs) as Harness[]) {
    if (only.length > 0 && !only.includes(harness)) continue;
    const { bodies, scratch } = await runs[harness]();
    try {
      if (rawDir) await writeFile(path.join(rawDir, `${harness}.raw.json`), `${JSON.stringify(normalise(bodies, scratch), null, 1)}\n`);
      const capture = toCapture(harness, bodies, scratch, CLIENTS[harness]());
      await writeFile(path.join(HARNESS_DIR, `${harness}.json`), `${JSON.stringify(capture, null, 1)}\n`);
      process.stdout.write(`${harness}: ${bodies.length} bodies, ${capture.rounds.length} tool rounds recorded\n`);
    } finally {
      await rm(scratch.home, { recursive: true, force: true });
    }
  }
}

/** Placeholder substitution and scratch paths made stable, over a JSON value. */
function normalise(value: unknown, scratch: Scratch): unknown {
  const text = JSON.stringify(value)
    .replaceAll(scratch.work, '/home/dev/project')
    .replaceAll(scratch.home, '/home/dev')
    .replaceAll(ASK, '{{ask}}');
  return JSON.parse(text);
}

/** The strings of a round's tool output (Claude Code tool_result content, Codex function_call_output, a chat `tool` message), mapped by `f`. */
function mapToolOutput(form: HarnessForm, item: unknown, f: (text: string) => string): unknown {
  const record = item as Record<string, any>;
  if (form === 'responses') return record.type === 'function_call_output' ? { ...record, output: f(String(record.output)) } : record;
  if (form === 'chat') return record.role === 'tool' ? { ...record, content: f(String(record.content)) } : record;
  if (!Array.isArray(record.content)) return record;
  return {
    ...record,
    content: record.content.map((block: Record<string, any>) =>
      block.type !== 'tool_result' ? block : { ...block, content: typeof block.content === 'string' ? f(block.content) : substituteText(block.content, f) },
    ),
  };
}

const substituteText = (blocks: Array<Record<string, any>>, f: (text: string) => string) => blocks.map((b) => (b.type === 'text' ? { ...b, text: f(String(b.text)) } : b));

/** Message blocks without Claude Code's cache marks, which move to the last block from call to call. */
function unmarked(items: unknown[]): unknown[] {
  return items.map((item) => {
    const record = item as Record<string, any>;
    if (!Array.isArray(record.content)) return record;
    return { ...record, content: record.content.map(({ cache_control: _, ...block }: Record<string, unknown>) => block) };
  });
}

const FORM: Record<Harness, HarnessForm> = { 'claude-code': 'messages', codex: 'responses', langchain: 'chat' };

/**
 * Splits the recorded bodies into the first body and the rounds each later
 * one appended, with the tool outputs as `{{result}}`; then checks that
 * composing the rounds back (`harnessBody`) gives every recorded body again.
 */
export function toCapture(harness: Harness, raw: unknown[], scratch: Scratch, client: string): HarnessCapture {
  const form = FORM[harness];
  const key = conversationKey(form);
  const bodies = normalise(raw, scratch) as Array<Record<string, unknown>>;
  const [body] = bodies;
  if (!body || bodies.length < 2) throw new Error(`${harness}: ${bodies.length} bodies recorded, expected one per tool round and the answer's`);
  const conversations = bodies.map((b) => b[key] as unknown[]);
  const base = conversations[0] ?? [];
  const marked = form === 'messages';
  const resent = marked ? unmarked((conversations[1] ?? []).slice(0, base.length)) : base;
  const lastBlock = (base.at(-1) as Record<string, any> | undefined)?.content?.at?.(-1) as Record<string, unknown> | undefined;
  const cacheMark = marked && lastBlock?.cache_control ? (lastBlock.cache_control as Record<string, unknown>) : undefined;
  const originals: string[] = [];
  const rounds = conversations.slice(1).map((conversation, i) => {
    const appended = conversation.slice((conversations[i] ?? []).length);
    const text = JSON.stringify(appended);
    const failed = text.includes(MISSING_OUTPUT[harness]);
    let original = NOTES;
    const items = (marked ? unmarked(appended) : appended).map((item) =>
      mapToolOutput(form, item, (output) => {
        if (!failed) return output.replaceAll(NOTES, '{{result}}');
        // The failed tool's message line: Claude Code "Exit code 1\n<message>", Codex "…Output:\n<message>", LangChain "Error: <message>\n Please fix your mistakes."
        const line = MISSING_OUTPUT[harness];
        const at = output.indexOf(line);
        if (at < 0) return output;
        original = line;
        return `${output.slice(0, at)}{{result}}${output.slice(at + line.length)}`;
      }),
    );
    originals.push(original);
    const call = (items as Array<Record<string, any>>).flatMap((item) => [item.call_id, ...(Array.isArray(item.tool_calls) ? item.tool_calls.map((c: Record<string, unknown>) => c.id) : []), ...(Array.isArray(item.content) ? item.content.map((b: Record<string, unknown>) => (b.type === 'tool_use' ? b.id : undefined)) : [])]).find((id) => typeof id === 'string');
    if (typeof call !== 'string') throw new Error(`${harness}: round ${i + 1} has no tool call`);
    return { id: call, failed, items };
  });
  if (!rounds.some((round) => round.failed)) throw new Error(`${harness}: no failed tool round was recorded`);
  const capture: HarnessCapture = { harness, form, client, body, ...(isDeepStrictEqual(resent, base) ? {} : { resent }), ...(cacheMark ? { cacheMark } : {}), rounds };
  bodies.forEach((recorded, k) => {
    const composed = harnessBody(capture, { history: [], ask: '{{ask}}', rounds: originals.slice(0, k).map((result, template) => ({ template, result })) });
    if (!isDeepStrictEqual(composed, recorded)) throw new Error(`${harness}: composing ${k} tool rounds does not give the body recorded after them`);
  });
  return capture;
}

/** The message of the failed tool (reading a file that is not there) in each harness's tool output. */
const MISSING_OUTPUT: Record<Harness, string> = {
  'claude-code': `cat: ${MISSING}: No such file or directory`,
  codex: `cat: ${MISSING}: No such file or directory`,
  langchain: `ENOENT: no such file or directory, open '/home/dev/project/${MISSING}'`,
};

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
