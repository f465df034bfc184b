// What one scan of a caller's body finds (see input-scan.ts), and the result
// sizes the scanners and the worst case both count with: the form scanners
// fill an InputScan, input-scan.ts runs them, worst-case.ts reads it.
import type { AllowanceKind } from '../core/input-allowances';

/** Tokens of a fetched page's wrapper (URL, title, retrieval time) beyond its `max_content_tokens`. */
export const FETCH_RESULT_OVERHEAD_TOKENS = 256;
/** One file_search result: a chunk of at most 4,096 tokens (OpenAI's largest) and its file name and attributes. */
export const FILE_SEARCH_RESULT_TOKENS = 4_096 + 64;

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
