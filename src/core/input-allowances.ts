// What an upstream can add to a call's input beyond the request body
// (docs/architecture.md §9): an allow-list of known kinds, each with an allowance in
// tokens that the worst case reserves for every one a request names. Anything
// that can add input and is not on this list (an unknown tool type, an
// unknown content part that refers to a file, a URL or a stored id) takes the
// largest allowance of the deployment's table. A catalog may set its own
// numbers per provider and per deployment (`input_allowances`).
//
// Why each default (the README's table repeats them):
// - Hosted tools run on the upstream, inside the call; what they read comes
//   back as input the body does not hold. No API bounds it, so these are
//   policy figures: totals per tool for the call, covering every result it
//   adds and the later samplings that read it again (the prompt itself is
//   counted once per sampling by the worst case).
//   · web_search 200,000: a search-heavy call was billed 150,000 input
//     tokens for one web_search tool (issue 27); a third more.
//   · web_fetch 200,000: the same loop, fetching whole pages (Anthropic's own
//     `max_content_tokens` default is none).
//   · mcp 200,000: a remote server's tool list and results, as much as a
//     search.
//   · file_search 200,000: one search returns at most 20 results (OpenAI's
//     default max_num_results) of at most 4,096 tokens (the largest chunk a
//     vector store cuts), 81,920; two searches and a third of headroom.
//   · code_execution 100,000: what a sandbox prints and reads back.
//   · image_generation 8,000: the generated image read back as an input
//     image (twice the image allowance below: the image and an edit of it).
// - Inputs the prompt names but does not hold, read on every sampling:
//   · image 4,000, for every image, inline ones too (an image costs by its
//     pixels, not its bytes: a flat PNG of 1568 × 1568 is a few hundred bytes
//     and ~1,600 tokens): Anthropic caps an image at about 1,600 tokens;
//     OpenAI's high detail costs at most 1,445 (gpt-4o, 8 tiles), 2,489
//     (gpt-4.1-mini), 2,642 (o4-mini), 3,779 (gpt-4.1-nano). gpt-4o-mini
//     prices images as up to 48,169 tokens: set `image` on such deployments.
//   · document 300,000, for a file by URL or id and every PDF (inline too: a
//     page costs its text and an image of it whatever its bytes): Anthropic
//     reads up to 100 pages at up to 3,000 tokens a page.
//   · prompt 100,000: a stored OpenAI prompt template (Responses `prompt`).
// - Built-in client tools: the upstream adds a definition the body only
//   names (their results come back in a later request's body). Anthropic
//   documents bash 245 and text_editor 700 tokens, and computer 735 plus a
//   499-token system prompt (1,234). memory 1,000 and shell 1,000 (Responses
//   local_shell, shell, apply_patch) are undocumented: policy figures above
//   the text editor's, which they resemble.

export const DEFAULT_INPUT_ALLOWANCES = {
  web_search: 200_000,
  web_fetch: 200_000,
  mcp: 200_000,
  file_search: 200_000,
  code_execution: 100_000,
  image_generation: 8_000,
  image: 4_000,
  document: 300_000,
  prompt: 100_000,
  bash: 245,
  text_editor: 700,
  computer: 1_234,
  memory: 1_000,
  shell: 1_000,
} as const;

export type AllowanceKind = keyof typeof DEFAULT_INPUT_ALLOWANCES;
export type InputAllowances = Readonly<Record<AllowanceKind, number>>;

export const ALLOWANCE_KINDS = Object.keys(DEFAULT_INPUT_ALLOWANCES) as AllowanceKind[];

/** The most a catalog may allow one input (tokens): past any model's context window many times over. */
export const MAX_INPUT_ALLOWANCE = 100_000_000;

/** A deployment's table: the defaults, then its provider's numbers, then its own. */
export function resolveAllowances(...overrides: ReadonlyArray<Partial<InputAllowances> | undefined>): InputAllowances {
  const table: Record<AllowanceKind, number> = { ...DEFAULT_INPUT_ALLOWANCES };
  for (const override of overrides) if (override) Object.assign(table, override);
  return table;
}

/** What anything unknown that can add input takes: the largest allowance of the table. */
export function largestAllowance(table: InputAllowances): number {
  let largest = 0;
  for (const kind of ALLOWANCE_KINDS) if (table[kind] > largest) largest = table[kind];
  return largest;
}
