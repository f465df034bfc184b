// How the complexity assessment reads a conversation (docs/architecture.md §5, the agent
// rule). The latest user words are the task; the user words before them are
// the previous ask, which a short follow-up ("yes, go ahead", "继续") may
// carry on (complexity.ts); every other turn counts only by its length.
//
// What an agent harness wraps around the ask is not words of the
// conversation, so a turn is read for what the user asked, not for the bulk
// around it:
// - system reminders (Claude Code's `<system-reminder>` blocks, anywhere in a
//   text), and the preambles Codex puts in the ask's own user turn (its
//   AGENTS.md block, `<environment_context>`, `<user_instructions>`), which
//   open a text block;
// - system turns inside the conversation (Claude Code's environment);
// - tool calls and tool results: they count only as the state of the tool
//   loop (is the turn a tool result, rounds since the ask, did the last tool
//   fail).
//
// It reads in one pass and builds only the task's text: an agent session of hundreds of messages costs a length count per
// message, not a copy of the session.
import type { CanonicalContent, CanonicalMessage } from '../core/canonical';
import { countImages } from '../core/canonical-text';

export interface Conversation {
  /** The latest user words: the last user message with text outside system reminders. */
  task: string;
  taskImages: number;
  /** The index of the message with the user words before the task, -1 if none. */
  previousIndex: number;
  /** Characters of the other user and assistant words, and the first of them as a sample for the token rate. */
  historyChars: number;
  historySample: string;
  /** User turns with words before the task. */
  userTurns: number;
  /** The latest message is only tool results: the agent is mid-task. */
  toolLoop: boolean;
  /** Tool results since the task's ask. */
  toolRounds: number;
  /** The latest tool result reports a failure (an error result, a non-zero exit, an error message). */
  toolFailed: boolean;
}

const OPEN = '<system-reminder>';
const CLOSE = '</system-reminder>';
const SAMPLE_CHARS = 300;

/**
 * Harness preambles that open a text block, each with what closes it: the
 * block is not words up to the close (all of it when unclosed). Learnt from
 * the bodies Codex sends (test/fixtures/routing/harness/codex.json).
 */
const PREAMBLES: ReadonlyArray<readonly [open: string, close: string]> = [
  ['# AGENTS.md instructions for ', '</INSTRUCTIONS>'],
  ['<environment_context>', '</environment_context>'],
  ['<user_instructions>', '</user_instructions>'],
  ['<INSTRUCTIONS>', '</INSTRUCTIONS>'],
  [OPEN, CLOSE],
];

/** Where the words of a text block start: after the harness preambles that open it. */
function afterPreambles(text: string): number {
  let at = 0;
  for (;;) {
    while (at < text.length && text.charCodeAt(at) <= 32) at += 1;
    const code = text.charCodeAt(at);
    // Every preamble starts with `<` or `#`: most blocks are dismissed by one comparison.
    if (code !== 60 && code !== 35) return at;
    const preamble = PREAMBLES.find(([open]) => text.startsWith(open, at));
    if (!preamble) return at;
    const close = text.indexOf(preamble[1], at + preamble[0].length);
    if (close < 0) return text.length;
    at = close + preamble[1].length;
  }
}

/** How much of a tool result is read for a failure. */
const FAILURE_CHARS = 300;

export function readConversation(messages: readonly CanonicalMessage[]): Conversation {
  let taskIndex = -1;
  let previousIndex = -1;
  for (let i = messages.length - 1; i >= 0 && previousIndex < 0; i -= 1) {
    const message = messages[i];
    if (message?.role !== 'user' || !hasWords(message.content)) continue;
    if (taskIndex < 0) taskIndex = i;
    else previousIndex = i;
  }
  let historyChars = 0;
  let historySample = '';
  let userTurns = 0;
  let toolRounds = 0;
  let taskImages = 0;
  let lastResult: CanonicalContent | undefined;
  messages.forEach((message, index) => {
    if (index > taskIndex) {
      for (const block of message.content) {
        if (block.type !== 'tool_result') continue;
        toolRounds += 1;
        lastResult = block;
      }
    }
    if (index === taskIndex) {
      taskImages = countImages(message.content);
      return;
    }
    // A system turn is the harness's instructions, not a turn of the conversation.
    if (message.role === 'system' || !hasWords(message.content)) return;
    const chars = wordChars(message.content);
    if (message.role === 'user' && index < taskIndex) userTurns += 1;
    historyChars += chars;
    if (historySample.length < SAMPLE_CHARS) historySample += `${wordsOf(message.content).slice(0, SAMPLE_CHARS - historySample.length)}\n`;
  });
  const last = messages[messages.length - 1];
  const toolLoop = last?.role === 'user' && last.content.length > 0 && last.content.every((block) => block.type === 'tool_result');
  const task = taskIndex < 0 ? '' : wordsOf(messages[taskIndex]?.content ?? []);
  return { task, taskImages, previousIndex, historyChars, historySample, userTurns, toolLoop, toolRounds, toolFailed: lastResult?.type === 'tool_result' && failed(lastResult) };
}

/**
 * Whether a tool result reports a failure: flagged as an error (Messages
 * `is_error`), or its output opens like one: Claude Code's "Exit code 1",
 * Codex's "Process exited with code 2" after its chunk header, LangChain's
 * "Error: …".
 */
function failed(result: Extract<CanonicalContent, { type: 'tool_result' }>): boolean {
  if (result.isError === true) return true;
  const first = result.content[0];
  const text = first?.type === 'text' ? first.text.slice(0, FAILURE_CHARS) : '';
  if (/^\s*(?:Exit code [1-9]|Error\b|error:|Traceback|fatal:)/.test(text)) return true;
  const exit = text.indexOf('exited with code ');
  return exit >= 0 && text.charCodeAt(exit + 17) !== 48;
}

/** The words of a message: its text blocks and text documents, system reminders removed. */
export function wordsOf(content: readonly CanonicalContent[]): string {
  const pieces: string[] = [];
  for (const block of content) {
    if (block.type === 'text') {
      const start = afterPreambles(block.text);
      const text = start === 0 ? block.text : block.text.slice(start);
      if (text !== '') pieces.push(text.includes(OPEN) ? outsideReminders(text) : text);
    }
    else if (block.type === 'document' && block.source.kind === 'text') pieces.push(block.source.data);
  }
  return pieces.length === 1 ? (pieces[0] ?? '') : pieces.join('\n');
}

function hasWords(content: readonly CanonicalContent[]): boolean {
  for (const block of content) {
    if (block.type === 'document' && block.source.kind === 'text' && block.source.data.trim() !== '') return true;
    if (block.type !== 'text') continue;
    let found = false;
    eachOutside(block.text, (from, to) => {
      for (let i = from; i < to && !found; i += 1) if (block.text.charCodeAt(i) > 32) found = true;
      return !found;
    });
    if (found) return true;
  }
  return false;
}

function wordChars(content: readonly CanonicalContent[]): number {
  let chars = 0;
  for (const block of content) {
    if (block.type === 'document' && block.source.kind === 'text') chars += block.source.data.length;
    else if (block.type === 'text')
      eachOutside(block.text, (from, to) => {
        chars += to - from;
        return true;
      });
  }
  return chars;
}

/** Calls `visit` with each [from, to) span of `text` outside its opening preambles and system reminders, until it returns false. */
function eachOutside(text: string, visit: (from: number, to: number) => boolean): void {
  let at = afterPreambles(text);
  for (let open = text.indexOf(OPEN); open >= 0; open = text.indexOf(OPEN, at)) {
    if (open > at && !visit(at, open)) return;
    const close = text.indexOf(CLOSE, open + OPEN.length);
    // An unclosed reminder is not a reminder: the rest is text.
    if (close < 0) {
      visit(open, text.length);
      return;
    }
    at = close + CLOSE.length;
  }
  if (at < text.length) visit(at, text.length);
}

function outsideReminders(text: string): string {
  let out = '';
  eachOutside(text, (from, to) => {
    out += text.slice(from, to);
    return true;
  });
  return out;
}
