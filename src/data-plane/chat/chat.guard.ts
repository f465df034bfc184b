// Input guardrails over a chat-completions body: every text the upstream will
// read (messages of every role, content parts, earlier tool calls' arguments,
// earlier reasoning), in place (copy-on-write), so the body that passes
// through is the caller's own but for the redacted texts.
import type { InputInspector } from '../../guardrails/guardrail-engine';
import { guardOpenAiContent, inspectJsonText } from '../body-walk';
import { editItems, isObject, withField } from '../../core/json-edit';
import type { RawObject } from '../../core/canonical';

export function guardChatBody<T extends RawObject>(body: T, inspect: InputInspector): T {
  const { messages } = body;
  if (!Array.isArray(messages)) return body;
  return withField(body, 'messages', editItems(messages, (m: unknown, i) => guardMessage(m, `messages.${i}`, inspect)));
}

function guardMessage(message: unknown, field: string, inspect: InputInspector): unknown {
  if (!isObject(message)) return message;
  let out = withField(message, 'content', guardOpenAiContent(message.content, `${field}.content`, inspect));
  for (const key of ['refusal', 'reasoning_content', 'reasoning'] as const) {
    const value = message[key];
    if (typeof value === 'string') out = withField(out, key, inspect.text(value, `${field}.${key}`));
  }
  const calls = message.tool_calls;
  if (Array.isArray(calls)) out = withField(out, 'tool_calls', editItems(calls, (c: unknown, j) => guardToolCall(c, `${field}.tool_calls.${j}`, inspect)));
  return out;
}

/** Arguments are JSON in a string: inspected leaf by leaf, so a redaction keeps them valid JSON. */
function guardToolCall(call: unknown, field: string, inspect: InputInspector): unknown {
  if (!isObject(call) || !isObject(call.function) || typeof call.function.arguments !== 'string') return call;
  return withField(call, 'function', withField(call.function, 'arguments', inspectJsonText(call.function.arguments, `${field}.function.arguments`, inspect)));
}
