// Codex CLI, as users run it: the real CLI (`@openai/codex`'s native binary,
// from its platform package) with a custom model provider in config.toml
// pointing at the gateway (`wire_api = "responses"`, the only wire API Codex
// 0.169 accepts) and a gateway key in the provider's `env_key`, against fake
// upstreams that speak the real protocols. Codex runs `codex exec` to the
// end: a tool call it executes, the output sent back, then the answer.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { runCli, type CliRun } from '../support/cli-process';
import type { FakeUpstream } from '../support/fake-upstreams';
import { startKeyedGateway, usageDetail, type KeyedGateway } from './e2e-support';

/** The native binary in the platform package npm installs beside `@openai/codex`. */
async function codexBinary(): Promise<string | undefined> {
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  try {
    const manifest = createRequire(import.meta.url).resolve('@openai/codex-linux-x64/package.json');
    const vendor = path.join(path.dirname(manifest), 'vendor');
    for (const triple of await readdir(vendor)) {
      const binary = path.join(vendor, triple, 'bin', 'codex');
      if (existsSync(binary)) return binary;
    }
  } catch {
    // not installed
  }
  return undefined;
}

interface CodexRun extends CliRun {
  /** `codex exec --json` events, one per stdout line. */
  events: any[];
}

/** `codex exec --json …`, its events parsed. */
async function runCodex(binary: string, args: string[], env: Record<string, string>, cwd: string): Promise<CodexRun> {
  const run = await runCli(binary, args, env, cwd, 90_000);
  const events = run.stdout.split('\n').flatMap((line) => {
    try {
      return line.trim() ? [JSON.parse(line)] : [];
    } catch {
      return [];
    }
  });
  return { ...run, events };
}

/** A config.toml with the gateway as a custom model provider, as the README shows it. */
const configToml = (baseUrl: string, model: string) => `model = "${model}"
model_provider = "tsxt"
check_for_update_on_startup = false

[model_providers.tsxt]
name = "tsxt gateway"
base_url = "${baseUrl}/v1"
wire_api = "responses"
env_key = "TSXT_API_KEY"
`;

describe('e2e: Codex CLI through the gateway', function () {
  this.timeout(180_000);
  let binary: string | undefined;
  let gateway: KeyedGateway;
  let fakes: Record<'anthropic' | 'openai' | 'responses', FakeUpstream>;
  let home: string;
  let work: string;

  before(async function () {
    binary = await codexBinary();
    if (!binary) {
      console.log(`      (skipped: the Codex CLI binary is built for linux-x64; this is ${process.platform}-${process.arch} or it is not installed)`);
      this.skip();
    }
    gateway = await startKeyedGateway({ responses: true });
    fakes = { ...gateway.fakes, responses: gateway.fakes.responses! };
    home = await mkdtemp(path.join(os.tmpdir(), 'codex-home-'));
    work = await mkdtemp(path.join(os.tmpdir(), 'codex-work-'));
    await writeFile(path.join(work, 'note.txt'), 'the secret word is marmalade\n');
  });

  after(async () => {
    await gateway?.close();
    if (home) await rm(home, { recursive: true, force: true });
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function exec(model: string, prompt: string): Promise<CodexRun> {
    await writeFile(path.join(home, 'config.toml'), configToml(gateway.t.baseUrl, model));
    return runCodex(binary!, ['exec', '--json', '--skip-git-repo-check', '--sandbox', 'read-only', prompt], { HOME: home, CODEX_HOME: home, TSXT_API_KEY: gateway.secret }, work);
  }

  /** What the function_call_output items Codex sent back say. */
  const toolOutputs = (body: any): string[] =>
    (Array.isArray(body.input) ? body.input : []).flatMap((item: any) => (item.type === 'function_call_output' ? [typeof item.output === 'string' ? item.output : JSON.stringify(item.output)] : []));

  for (const kind of ['anthropic', 'openai', 'responses'] as const) {
    const model = { anthropic: 'm-anthropic', openai: 'm-openai', responses: 'm-responses' }[kind];
    it(`completes a task on ${kind === 'responses' ? 'a Responses-speaking upstream (pass-through)' : `an ${kind} upstream (translated)`}: runs the tool the model asks for, sends its output back, prints the answer, exits 0`, async () => {
      const upstream = fakes[kind];
      const from = upstream.requests.length;
      upstream.script(
        { toolUse: { id: `call_codex_${kind}`, name: 'exec_command', input: { cmd: 'cat note.txt' } }, usage: { input: 5000, output: 20 } },
        { text: 'The note says the secret word is marmalade.', usage: { input: 5200, cacheRead: 4800, output: 12 } },
      );

      const run = await exec(model, 'What does note.txt say?');

      expect(run.code, `${run.stderr}\n${run.stdout}`).to.equal(0);
      const messages = run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').map((e) => e.item.text);
      expect(messages.at(-1), run.stdout).to.equal('The note says the secret word is marmalade.');
      const commands = run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'command_execution');
      expect(commands.map((e) => e.item.command).join('\n')).to.contain('cat note.txt');

      const received = upstream.requests.slice(from);
      expect(received, 'two model calls: the tool call, then the answer').to.have.length(2);
      const [first, second] = received;
      // The tool ran on this machine and its output reached the model.
      const outputs = kind === 'anthropic' ? anthropicToolResults(second!.body) : kind === 'openai' ? chatToolResults(second!.body) : toolOutputs(second!.body);
      expect(outputs.join('\n')).to.contain('the secret word is marmalade');
      expect(JSON.stringify(first!.headers)).not.to.contain(gateway.secret);
      if (kind === 'responses') {
        expect(first!.path).to.equal('/v1/responses');
        expect(first!.body).to.include({ model: 'gpt-fake-responses', store: false, stream: true });
        expect(first!.body.tools.some((tool: any) => tool.type === 'web_search')).to.equal(true);
      } else {
        const names: string[] =
          kind === 'anthropic' ? first!.body.tools.map((tool: any) => tool.name) : first!.body.tools.map((tool: any) => tool.function.name);
        expect(names).to.include('exec_command');
        // Codex's namespace of sub-agent tools, flattened for a protocol without namespaces.
        expect(names.some((name) => name.startsWith('multi_agent_v1__'))).to.equal(true);
      }

      const usage = await usageDetail(gateway.t, gateway.owner.token, gateway.keyId);
      const records = usage.items.filter((item) => item.model === model).slice(0, 2);
      expect(records.map((r) => [r.form, r.status, r.stream])).to.deep.equal([
        ['responses', 'ok', true],
        ['responses', 'ok', true],
      ]);
    });
  }
});

function anthropicToolResults(body: any): string[] {
  return body.messages.flatMap((m: any) =>
    Array.isArray(m.content)
      ? m.content.flatMap((block: any) => (block.type === 'tool_result' ? [typeof block.content === 'string' ? block.content : JSON.stringify(block.content)] : []))
      : [],
  );
}

function chatToolResults(body: any): string[] {
  return body.messages.flatMap((m: any) => (m.role === 'tool' ? [typeof m.content === 'string' ? m.content : JSON.stringify(m.content)] : []));
}
