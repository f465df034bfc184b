// One pass over the caller's body (after input guardrails) that finds what
// the upstream can read beyond the body's own bytes (input-allowances.ts):
// hosted tools, files, images and stored prompts named by reference, built-in
// tool definitions, the features for which upstreams add instructions, and
// whether the call can write the prompt cache. It reads the body as the caller
// sent it, in its own form, so it sees what a translation would drop and what
// pass-through forwards alike: the worst case must hold whatever the upstream.
import type { CanonicalRequest } from '../core/canonical';
import type { InputScan } from './input-scan.types';
import { scanMessagesBody } from './messages-input-scan';
import { scanChatBody, scanResponsesBody } from './openai-input-scan';

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
