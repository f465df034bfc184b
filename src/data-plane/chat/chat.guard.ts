// Input guardrails over a chat-completions body: every text the upstream will
// read (messages of every role, content parts, earlier tool calls' arguments,
// earlier reasoning), in place (copy-on-write), so the body that passes
// through is the caller's own but for the redacted texts.
import type { InputInspector } from '../../guardrails/guardrail-engine';
import { editItems, inspectJsonText, inspectUnknown, isObject, withField } from '../body-walk';
import type { RawObject } from '../canonical';

export function guardChatBody<T extends RawObject>(body: T, inspect: InputInspector): T {
  const { messages } = body;
  if (!Array.isArray(messages)) return body;
  return withField(body, 'messages', editItems(messages, (m: unknown, i) => guardMessage(m, `messages.${i}`, inspect)));
}

function guardMessage(message: unknown, field: string, inspect: InputInspector): unknown {
  if (!isObject(message)) return message;
  let out = withField(message, 'content', guardContent(message.content, `${field}.content`, inspect));
  for (const key of ['refusal', 'reasoning_content', 'reasoning'] as const) {
    const value = message[key];
    if (typeof value === 'string') out = withField(out, key, inspect.text(value, `${field}.${key}`));
  }
  const calls = message.tool_calls;
  if (Array.isArray(calls)) out = withField(out, 'tool_calls', editItems(calls, (c: unknown, j) => guardToolCall(c, `${field}.tool_calls.${j}`, inspect)));
  return out;
}

function guardContent(content: unknown, field: string, inspect: InputInspector): unknown {
  if (typeof content === 'string') return inspect.text(content, field);
  if (!Array.isArray(content)) return content;
  return editItems(content, (part: unknown, i) => {
    if (!isObject(part)) return part;
    const at = `${field}.${i}`;
    switch (part.type) {
      case 'text':
        return typeof part.text === 'string' ? withField(part, 'text', inspect.text(part.text, `${at}.text`)) : part;
      case 'refusal':
        return typeof part.refusal === 'string' ? withField(part, 'refusal', inspect.text(part.refusal, `${at}.refusal`)) : part;
      case 'image_url':
      case 'input_audio':
      case 'file':
        // Pixels, sound and file bytes or addresses: no text to scan.
        return part;
      default:
        return inspectUnknown(part, at, inspect);
    }
  });
}

/** Arguments are JSON in a string: inspected leaf by leaf, so a redaction keeps them valid JSON. */
function guardToolCall(call: unknown, field: string, inspect: InputInspector): unknown {
  if (!isObject(call) || !isObject(call.function) || typeof call.function.arguments !== 'string') return call;
  return withField(call, 'function', withField(call.function, 'arguments', inspectJsonText(call.function.arguments, `${field}.function.arguments`, inspect)));
}
