// One pass over the caller's body (after input guardrails) that finds what
// the upstream can read beyond the body's own bytes (input-allowances.ts):
// hosted tools, files, images and stored prompts named by reference, built-in
// tool definitions, the features for which upstreams add instructions, and
// whether the call can write the prompt cache. It reads the body as the caller
// sent it, in its own form, so it sees what a translation would drop and what
// pass-through forwards alike: the worst case must hold whatever the upstream.
import type { CanonicalRequest } from '../core/canonical';
import type { AllowanceKind } from '../core/input-allowances';
import { scanMessagesBody } from './messages-input-scan';
import { scanChatBody, scanResponsesBody } from './openai-input-scan';

export { FETCH_RESULT_OVERHEAD_TOKENS, FILE_SEARCH_RESULT_TOKENS } from './input-scanner';

export interface InputScan {
  /** Inputs the prompt names by reference (images, files, definitions): read again on every sampling. */
  prompt: Partial<Record<AllowanceKind, number>>;
  /** Hosted tools whose results the upstream adds, by kind. */
  results: Partial<Record<AllowanceKind, number>>;
  /** Unknown parts that refer to a file, a URL or a stored id (each takes the largest allowance, on every sampling). */
  unknownPrompt: number;
  /** Unknown tool types (each takes the largest allowance, and may run on the upstream). */
  unknownResults: number;
  /** Results whose size the request bounds itself (web_fetch `max_uses` × `max_content_tokens`, …), in tokens. */
  provenResults: number;
  /** A tool runs on the upstream: it may sample again after each use, reading the prompt again. */
  hosted: boolean;
  /** The most hosted-tool uses the request allows (`max_uses`, `max_tool_calls`), or null when it states none. */
  statedUses: number | null;
  /** Tool search loads deferred definitions the body holds: up to the body again on each sampling. */
  searchesTools: boolean;
  /** Features for which an upstream adds instructions of its own: tools, structured output, citations. */
  instructions: number;
  /** The body can write the prompt cache (`cache_control`), and the longest TTL it asks for. */
  cacheWrite: 'none' | '5m' | '1h';
  /** Output tokens billed beyond max_tokens: a chat `prediction` (its rejected tokens bill as output). */
  extraOutput: number;
}

export function emptyScan(): InputScan {
  return {
    prompt: {},
    results: {},
    unknownPrompt: 0,
    unknownResults: 0,
    provenResults: 0,
    hosted: false,
    statedUses: null,
    searchesTools: false,
    instructions: 0,
    cacheWrite: 'none',
    extraOutput: 0,
  };
}

/**
 * Everything the request names that the upstream can read beyond the body.
 * A request without a caller body (built inside the gateway) names nothing
 * but its tools.
 */
export function scanInputs(request: CanonicalRequest): InputScan {
  const scan = emptyScan();
  const source = request.source;
  if (!source) {
    if (request.tools?.length) scan.instructions++;
    return scan;
  }
  switch (source.form) {
    case 'messages':
      scanMessagesBody(source.body, scan);
      break;
    case 'chat_completions':
      scanChatBody(source.body, scan);
      break;
    case 'responses':
      scanResponsesBody(source.body, scan);
      break;
  }
  return scan;
}
