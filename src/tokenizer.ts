// The o200k tokenizer (gpt-tokenizer), loaded on first use: its vocabulary
// is large in memory, and a gateway in front of real upstreams needs
// it only for `count_tokens`, the mock provider and the local counts of
// billing (a call cut before its upstream's usage came, an upstream that
// reports none). Complexity assessment estimates instead
// (src/routing/complexity.ts).
//
// Loading it takes a noticeable stretch of CPU. The counts a caller can set
// off (countTokensYielding: billing and count_tokens) therefore run on a
// worker thread made on first use, so that load, and every count
// after it, happen beside the event loop rather than on it: no key holder can
// stall other tenants' calls by cutting a call. The mock provider counts
// synchronously on the main thread (it is a test upstream).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type * as GptTokenizerModule from 'gpt-tokenizer';

type GptTokenizer = typeof GptTokenizerModule;

let loaded: GptTokenizer | undefined;

function tokenizer(): GptTokenizer {
  // require() loads synchronously, so callers stay synchronous.
  loaded ??= createRequire(import.meta.url)('gpt-tokenizer') as GptTokenizer;
  return loaded;
}

/** Texts are counted in pieces of about this many characters, so a 20 MB prompt never becomes one 20 MB token array. */
const COUNT_CHUNK_CHARS = 64 * 1024;

/**
 * Tokens of `text`. Long texts are counted piece by piece, cut before a
 * space: the tokenizer's pre-split starts a word at its leading space, so the
 * sum equals the whole count. Text without spaces (Chinese) is cut anywhere,
 * which may move a token or two per 64K characters.
 */
export function countTokens(text: string): number {
  if (text === '') return 0;
  const { encode } = tokenizer();
  if (text.length <= COUNT_CHUNK_CHARS) return encode(text).length;
  let total = 0;
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start);
    total += encode(text.slice(start, end)).length;
    start = end;
  }
  return total;
}

/** Where the piece of `text` from `start` ends: at most COUNT_CHUNK_CHARS on, at a space when there is one, never inside a surrogate pair. */
function pieceEnd(text: string, start: number): number {
  let end = Math.min(text.length, start + COUNT_CHUNK_CHARS);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start + COUNT_CHUNK_CHARS / 2) end = space;
    else if (isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  }
  return end;
}

/**
 * The worker's code: the same pieces as countTokens (cut before a space, never
 * inside a surrogate pair), so both count alike. Evaluated as CommonJS; the
 * tokenizer's resolved path comes in workerData, so it loads the package the
 * gateway itself would, from a bundle or from source alike.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { encode } = require(workerData.tokenizer);
const CHUNK = workerData.chunk;
function pieceEnd(text, start) {
  let end = Math.min(text.length, start + CHUNK);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start + CHUNK / 2) end = space;
    else { const c = text.charCodeAt(end - 1); if (c >= 0xd800 && c <= 0xdbff) end -= 1; }
  }
  return end;
}
parentPort.on('message', ({ id, text }) => {
  try {
    let total = 0;
    if (text.length <= CHUNK) total = encode(text).length;
    else for (let start = 0; start < text.length; ) { const end = pieceEnd(text, start); total += encode(text.slice(start, end)).length; start = end; }
    parentPort.postMessage({ id, count: total });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

interface Counting {
  resolve: (count: number) => void;
  reject: (error: Error) => void;
}

/** The counting worker and its calls in flight; made on first use, gone (and made again) if it dies. */
let counter: { worker: Worker; pending: Map<number, Counting> } | undefined;
let nextId = 0;

function countingWorker(): NonNullable<typeof counter> {
  if (counter) return counter;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { tokenizer: createRequire(import.meta.url).resolve('gpt-tokenizer'), chunk: COUNT_CHUNK_CHARS },
  });
  const pending = new Map<number, Counting>();
  const mine = { worker, pending };
  const fail = (error: Error): void => {
    if (counter === mine) counter = undefined;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on('message', (reply: { id: number; count?: number; error?: string }) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (reply.count !== undefined) waiter.resolve(reply.count);
    else waiter.reject(new Error(`token count failed: ${reply.error ?? 'unknown error'}`));
    // Idle, the worker must not keep the process alive.
    if (pending.size === 0) worker.unref();
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`token counting worker exited (${code})`)));
  counter = mine;
  return mine;
}

/**
 * countTokens without holding the event loop: counted on the worker thread
 * (which loads the tokenizer on its first count). A short text is counted in
 * place once this thread has the tokenizer anyway (the mock provider loads it).
 */
export function countTokensYielding(text: string): Promise<number> {
  if (text === '') return Promise.resolve(0);
  if (loaded !== undefined && text.length <= 4096) return Promise.resolve(countTokens(text));
  const { worker, pending } = countingWorker();
  const id = nextId++;
  return new Promise<number>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.ref();
    worker.postMessage({ id, text });
  });
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** The longest prefix of `text` of at most `tokens` tokens. */
export function firstTokens(text: string, tokens: number): string {
  if (tokens <= 0) return '';
  const { decode, encode } = tokenizer();
  return decode(encode(text).slice(0, tokens));
}
