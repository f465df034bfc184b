// Input guardrails over a Messages-form body: every text the upstream will
// read, wherever the protocol puts it, in place (copy-on-write), so the body
// that passes through is the caller's own but for the redacted texts.
import type { InputInspector } from '../../guardrails/guardrail-engine';
import { inspectUnknown } from '../body-walk';
import { editItems, isObject, withField } from '../../core/json-edit';
import type { RawObject } from '../../core/canonical';

/** `system`, then every message's content; the same body when nothing was redacted. */
export function guardMessagesBody<T extends RawObject>(body: T, inspect: InputInspector): T {
  let out = body;
  const { system, messages } = body;
  if (typeof system === 'string') out = withField(out, 'system', inspect.text(system, 'system'));
  else if (Array.isArray(system)) out = withField(out, 'system', editItems(system, (b: unknown, i) => guardBlock(b, `system.${i}`, inspect)));
  if (Array.isArray(messages)) {
    out = withField(
      out,
      'messages',
      editItems(messages, (m: unknown, i) => (isObject(m) ? withField(m, 'content', guardContent(m.content, `messages.${i}.content`, inspect)) : m)),
    );
  }
  return out;
}

/** A message's or tool result's content: a string or blocks. */
function guardContent(content: unknown, field: string, inspect: InputInspector): unknown {
  if (typeof content === 'string') return inspect.text(content, field);
  if (Array.isArray(content)) return editItems(content, (b: unknown, i) => guardBlock(b, `${field}.${i}`, inspect));
  return content;
}

function guardText(block: RawObject, key: string, field: string, inspect: InputInspector): RawObject {
  const value = block[key];
  return typeof value === 'string' ? withField(block, key, inspect.text(value, `${field}.${key}`)) : block;
}

function guardBlock(block: unknown, field: string, inspect: InputInspector): unknown {
  if (!isObject(block)) return block;
  switch (block.type) {
    case 'text':
      return guardText(block, 'text', field, inspect);
    case 'tool_use':
      return withField(block, 'input', inspect.json(block.input, `${field}.input`));
    case 'tool_result':
      return withField(block, 'content', guardContent(block.content, `${field}.content`, inspect));
    case 'document': {
      let out = guardText(guardText(block, 'title', field, inspect), 'context', field, inspect);
      const source = block.source;
      if (isObject(source) && source.type === 'text') out = withField(out, 'source', guardText(source, 'data', `${field}.source`, inspect));
      else if (isObject(source) && source.type === 'content') {
        out = withField(out, 'source', withField(source, 'content', guardContent(source.content, `${field}.source.content`, inspect)));
      }
      return out;
    }
    case 'search_result':
      return withField(guardText(block, 'title', field, inspect), 'content', guardContent(block.content, `${field}.content`, inspect));
    case 'image':
      // Pixels and addresses, no text.
      return block;
    case 'thinking':
    case 'redacted_thinking':
      // Signed by the upstream, which refuses the conversation if they change.
      return block;
    default:
      return inspectUnknown(block, field, inspect);
  }
}
