// Claude Code, as users run it: the real CLI (`@anthropic-ai/claude-code`'s
// native binary) pointed at the gateway with ANTHROPIC_BASE_URL and a gateway
// key in ANTHROPIC_AUTH_TOKEN, against a fake Anthropic upstream that speaks
// the real SSE protocol. A recording proxy between the CLI and the gateway
// keeps what Claude Code itself sent, so the test can hold the upstream's view
// against it: pass-through means the two are equal but for `model`.
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import { createAccount, createKey, type TestAccount } from '../support/app';
import { runCli, type CliRun } from '../support/cli-process';
import { listenLocal } from '../support/local-server';
import { startE2eGateway, usageDetail, type E2eGateway } from './e2e-support';

/** The platform package npm installs beside `@anthropic-ai/claude-code` (its postinstall, which links it, does not run here). */
function claudeBinary(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  try {
    const manifest = createRequire(import.meta.url).resolve('@anthropic-ai/claude-code-linux-x64/package.json');
    const binary = path.join(path.dirname(manifest), 'claude');
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

interface Recorded {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** A pass-through HTTP proxy in front of the gateway that keeps every request it forwards. */
async function recordingProxy(target: string): Promise<{ url: string; seen: Recorded[]; close(): Promise<void> }> {
  const seen: Recorded[] = [];
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        body = raw.toString('utf8');
      }
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      const forward = http.request(
        { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
        (reply) => {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      forward.end(raw);
    });
  });
  const { origin, close } = await listenLocal(server);
  return { url: origin, seen, close };
}

interface ClaudeRun extends CliRun {
  result: any;
}

/** `claude -p <prompt> --output-format json`, its JSON result parsed. */
async function runClaude(binary: string, args: string[], env: Record<string, string>, cwd: string): Promise<ClaudeRun> {
  const run = await runCli(binary, args, env, cwd);
  let result: unknown;
  try {
    result = JSON.parse(run.stdout);
  } catch {
    result = undefined;
  }
  return { ...run, result };
}

/** The body as the upstream should get it: the caller's, with the deployment's model. */
const asForwarded = (body: any, model: string) => ({ ...body, model });

describe('e2e: Claude Code through the gateway', function () {
  this.timeout(120_000);
  const binary = claudeBinary();
  let gateway: E2eGateway;
  let owner: TestAccount;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let home: string;
  let work: string;
  let key: { api_key_id: string; api_key: string };

  before(async function () {
    if (!binary) {
      console.log(`      (skipped: the Claude Code binary is built for linux-x64; this is ${process.platform}-${process.arch} or it is not installed)`);
      this.skip();
    }
    gateway = await startE2eGateway();
    // Default guardrail policies: Claude Code's prompt passes them untouched
    // (its attribution address is a no-reply mailbox, not personal data).
    owner = await createAccount(gateway.t);
    key = await createKey(gateway.t, owner.token, { model_scope: ['m-anthropic'] });
    proxy = await recordingProxy(gateway.t.baseUrl);
    home = await mkdtemp(path.join(os.tmpdir(), 'claude-home-'));
    work = await mkdtemp(path.join(os.tmpdir(), 'claude-work-'));
  });

  after(async () => {
    await proxy?.close();
    await gateway?.close();
    if (home) await rm(home, { recursive: true, force: true });
    if (work) await rm(work, { recursive: true, force: true });
  });

  const env = () => ({
    HOME: home,
    ANTHROPIC_BASE_URL: proxy.url,
    ANTHROPIC_AUTH_TOKEN: key.api_key,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  });

  /** The /v1/messages calls Claude Code made since `from`, paired with what the upstream received for each. */
  function exchanges(from: { proxy: number; upstream: number }) {
    const sent = proxy.seen.slice(from.proxy).filter((r) => r.path.split('?')[0] === '/v1/messages');
    const received = gateway.fakes.anthropic.requests.slice(from.upstream).filter((r) => r.path === '/v1/messages');
    return { sent, received };
  }

  const marks = () => ({ proxy: proxy.seen.length, upstream: gateway.fakes.anthropic.requests.length });

  it('answers a plain prompt, with the request reaching the upstream as Claude Code sent it', async () => {
    const from = marks();
    gateway.fakes.anthropic.script({ text: 'Hello from the fake upstream.', usage: { input: 900, cacheRead: 40_000, output: 8 } });

    const run = await runClaude(binary!, ['-p', 'say hello', '--model', 'm-anthropic', '--output-format', 'json'], env(), work);

    expect(run.code, run.stderr || run.stdout).to.equal(0);
    expect(run.result?.is_error).to.equal(false);
    expect(run.result?.result).to.equal('Hello from the fake upstream.');
    const { sent, received } = exchanges(from);
    expect(sent).to.have.length(1);
    expect(received).to.have.length(1);
    const [request] = sent;
    const [upstream] = received;
    // What Claude Code sends today, all of which must survive the gateway.
    expect(request!.path).to.match(/^\/v1\/messages\?beta=true$/);
    expect(request!.body.messages.some((m: any) => m.role === 'system'), 'a system turn inside messages').to.equal(true);
    expect(request!.body.thinking?.type).to.equal('adaptive');
    expect(request!.body).to.include.keys('output_config', 'context_management', 'metadata', 'tools', 'system');
    expect(JSON.stringify(request!.body.system)).to.contain('cache_control');
    expect(upstream!.body).to.deep.equal(asForwarded(request!.body, 'claude-fake'));
    expect(upstream!.headers['anthropic-beta']).to.equal(request!.headers['anthropic-beta']);
    expect(upstream!.headers['anthropic-beta']).to.contain('claude-code-');
    expect(upstream!.headers['anthropic-version']).to.equal(request!.headers['anthropic-version']);
    expect(upstream!.headers['x-api-key']).to.equal('sk-ant-e2e-provider-key');
    expect(JSON.stringify(upstream!.headers)).not.to.contain(key.api_key);

    // Claude Code read input_tokens (cached included) and no cache field on top.
    expect(run.result.usage.input_tokens).to.equal(40_900);
    expect(run.result.usage.cache_read_input_tokens ?? 0).to.equal(0);
    expect(run.result.usage.output_tokens).to.equal(8);

    const usage = await usageDetail(gateway.t, owner.token, key.api_key_id);
    const record = usage.items[0]!;
    expect(record.status).to.equal('ok');
    expect(record.model).to.equal('m-anthropic');
    expect(record.routed_model).to.equal('claude-fake');
    // Adaptive thinking only permits thinking: a one-line greeting is not billed at the thinking premium.
    expect(record.thinking).to.equal(false);
    expect(record.tiers['no_thinking.input_cache_hit']).to.equal(40_000);
    expect(record.tiers['no_thinking.input_cache_miss']).to.equal(900);
  });

  it('works without --model: its default vendor model name reaches the neutral model through a catalog alias', async () => {
    const from = marks();
    gateway.fakes.anthropic.script({ text: 'Aliased hello.' });

    const run = await runClaude(binary!, ['-p', 'say hello', '--output-format', 'json'], env(), work);

    expect(run.code, run.stderr || run.stdout).to.equal(0);
    expect(run.result?.result).to.equal('Aliased hello.');
    const { sent, received } = exchanges(from);
    const requested = sent[0]!.body.model as string;
    expect(requested).to.match(/^claude-/);
    expect(received[0]!.body).to.deep.equal(asForwarded(sent[0]!.body, 'claude-fake'));
    const record = (await usageDetail(gateway.t, owner.token, key.api_key_id)).items[0]!;
    expect(record).to.include({ model: 'm-anthropic', requested_model: requested, status: 'ok' });
  });

  it('completes an agent turn: the upstream asks for a tool, Claude Code runs it and sends the result back', async () => {
    const note = path.join(work, 'note.txt');
    await writeFile(note, 'The launch code word is BLUEBIRD.\n');
    const from = marks();
    gateway.fakes.anthropic.script(
      { toolUse: { id: 'toolu_read_1', name: 'Read', input: { file_path: note } }, usage: { input: 1200, output: 20 } },
      { text: 'The note says the code word is BLUEBIRD.', usage: { input: 1400, cacheRead: 1200, output: 12 } },
    );

    const run = await runClaude(
      binary!,
      ['-p', 'Read note.txt and tell me the code word.', '--model', 'm-anthropic', '--output-format', 'json', '--allowedTools', 'Read'],
      env(),
      work,
    );

    expect(run.code, run.stderr || run.stdout).to.equal(0);
    expect(run.result?.result).to.equal('The note says the code word is BLUEBIRD.');
    const { sent, received } = exchanges(from);
    expect(received).to.have.length(2);
    expect(sent).to.have.length(2);
    for (const [i, upstream] of received.entries()) expect(upstream.body, `call ${i}`).to.deep.equal(asForwarded(sent[i]!.body, 'claude-fake'));
    // The second call carries the tool's output as a tool_result, with Claude Code's cache breakpoint.
    const last = received[1]!.body.messages.at(-1);
    const result = last.content.find((b: any) => b.type === 'tool_result');
    expect(result.tool_use_id).to.equal('toolu_read_1');
    expect(JSON.stringify(result.content)).to.contain('BLUEBIRD');
    const assistant = received[1]!.body.messages.at(-2);
    expect(assistant.content.some((b: any) => b.type === 'tool_use' && b.name === 'Read')).to.equal(true);

    const usage = await usageDetail(gateway.t, owner.token, key.api_key_id);
    const calls = usage.items.filter((item) => item.status === 'ok').slice(0, 2);
    expect(calls).to.have.length(2);
    expect(calls.every((c) => c.model === 'm-anthropic' && c.stream)).to.equal(true);
    // The tool turn and the answer turn are billed as what they are, neither at the thinking premium.
    expect(calls.map((c) => c.thinking)).to.deep.equal([false, false]);
  });
});
