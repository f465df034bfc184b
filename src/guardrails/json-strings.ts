// Walks a JSON value an upstream sent (a hosted tool's item, an event of a
// kind the gateway does not know) to edit its string leaves, copy-on-write.
// Iterative: however deep the value nests, the walk does not touch the stack.

type Container = Record<string, unknown> | unknown[];

interface Frame {
  source: Container;
  /** Object keys, or null for an array. */
  keys: string[] | null;
  next: number;
  /** The edited copy, once a leaf below changed. */
  copy: Container | null;
  parent: Frame | null;
  /** Where this container sits in its parent. */
  slot: string | number;
}

function open(source: Container, parent: Frame | null, slot: string | number): Frame {
  return { source, keys: Array.isArray(source) ? null : Object.keys(source), next: 0, copy: null, parent, slot };
}

function assign(frame: Frame, slot: string | number, value: unknown): void {
  frame.copy ??= Array.isArray(frame.source) ? frame.source.slice() : { ...frame.source };
  (frame.copy as Record<string | number, unknown>)[slot] = value;
}

/**
 * `value` with every string leaf `edit` changes replaced, skipping the values
 * of `skip` keys (ids, types, opaque payloads). The same value when nothing
 * changed; otherwise only the containers on the way to a change are copied.
 */
export function editStrings<T>(value: T, edit: (text: string) => string, skip: ReadonlySet<string>): T {
  if (typeof value === 'string') return edit(value) as T;
  if (value === null || typeof value !== 'object') return value;
  let frame: Frame | null = open(value as Container, null, 0);
  let result: unknown = value;
  while (frame !== null) {
    const { source, keys } = frame;
    const count = keys === null ? (source as unknown[]).length : keys.length;
    if (frame.next < count) {
      const slot: string | number = keys === null ? frame.next : (keys[frame.next] as string);
      frame.next++;
      if (typeof slot === 'string' && skip.has(slot)) continue;
      const child = (source as Record<string | number, unknown>)[slot];
      if (typeof child === 'string') {
        const edited = edit(child);
        if (edited !== child) assign(frame, slot, edited);
      } else if (child !== null && typeof child === 'object') {
        frame = open(child as Container, frame, slot);
      }
      continue;
    }
    const done: Container = frame.copy ?? frame.source;
    const parent: Frame | null = frame.parent;
    if (parent === null) result = done;
    else if (done !== frame.source) assign(parent, frame.slot, done);
    frame = parent;
  }
  return result as T;
}
