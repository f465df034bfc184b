// Input guardrails over a Responses-form body: every text the upstream will
// read (instructions, message content of every role, earlier function call
// arguments and free-text tool inputs, tool outputs, items of kinds added
// later), in place (copy-on-write), so the body that passes through is the
// caller's own but for the redacted texts.
import type { InputInspector } from '../../guardrails/guardrail-engine';
import { guardOpenAiContent, inspectJsonText, inspectUnknown } from '../body-walk';
import { editItems, isObject, withField } from '../../core/json-edit';
import type { RawObject } from '../../core/canonical';

export function guardResponsesBody<T extends RawObject>(body: T, inspect: InputInspector): T {
  let out = body;
  if (typeof body.instructions === 'string') out = withField(out, 'instructions', inspect.text(body.instructions, 'instructions'));
  const { input } = body;
  if (typeof input === 'string') out = withField(out, 'input', inspect.text(input, 'input'));
  else if (Array.isArray(input)) out = withField(out, 'input', editItems(input, (item: unknown, i) => guardItem(item, `input.${i}`, inspect)));
  return out;
}

function guardItem(item: unknown, field: string, inspect: InputInspector): unknown {
  if (!isObject(item)) return item;
  switch (item.type ?? 'message') {
    case 'message':
      return withField(item, 'content', guardOpenAiContent(item.content, `${field}.content`, inspect));
    case 'function_call':
      return typeof item.arguments === 'string' ? withField(item, 'arguments', inspectJsonText(item.arguments, `${field}.arguments`, inspect)) : item;
    case 'custom_tool_call':
      return typeof item.input === 'string' ? withField(item, 'input', inspect.text(item.input, `${field}.input`)) : item;
    case 'function_call_output':
    case 'custom_tool_call_output':
      return withField(item, 'output', guardOpenAiContent(item.output, `${field}.output`, inspect));
    case 'reasoning':
    case 'item_reference':
      // Reasoning is signed (its encrypted content) by the upstream, which refuses it if it changes; a reference holds no text.
      return item;
    default:
      return inspectUnknown(item, field, inspect);
  }
}

