import type { CanonicalContent, CanonicalEvent, MessageStopRaw, RawObject } from '../core/canonical';

/** A whole block of a plain answer: its canonical content, and the upstream's own block when it sent one (same-protocol relay). */
export interface CollectedBlock {
  content: CanonicalContent;
  raw?: RawObject;
}

interface Building {
  content: CanonicalContent;
  raw?: RawObject;
  json?: string;
}

/**
 * Folds a canonical event stream into whole content blocks (for non-streamed
 * replies), keeping what an upstream of the caller's own protocol sent beyond
 * the canonical fields: the message's own fields, usage fields the gateway
 * does not own, and the raw stop.
 */
export class ResponseCollector {
  private readonly building = new Map<number, Building>();
  /** Upstream message fields beyond the ones the gateway owns. */
  messageRaw: RawObject | undefined;
  /** Upstream usage fields the gateway does not own, latest value of each. */
  usageExtra: RawObject | undefined;
  stopRaw: MessageStopRaw | undefined;

  push(e: CanonicalEvent): void {
    switch (e.type) {
      case 'message_start':
        this.messageRaw = e.raw;
        break;
      case 'usage':
        if (e.extra) this.usageExtra = { ...this.usageExtra, ...e.extra };
        break;
      case 'message_stop':
        this.stopRaw = e.raw;
        break;
      case 'block_start': {
        const { block } = e;
        const raw = block.raw;
        let content: CanonicalContent;
        if (block.type === 'text') content = { type: 'text', text: '' };
        else if (block.type === 'thinking') content = { type: 'thinking', thinking: '' };
        else if (block.type === 'tool_use') content = { type: 'tool_use', id: block.id, name: block.name, input: {} };
        else content = { type: 'other', raw: block.raw };
        this.building.set(e.index, { content, ...(raw ? { raw } : {}) });
        break;
      }
      case 'text_delta': {
        const b = this.building.get(e.index)?.content;
        if (b?.type === 'text') b.text += e.text;
        break;
      }
      case 'thinking_delta': {
        const b = this.building.get(e.index)?.content;
        if (b?.type === 'thinking') b.thinking += e.text;
        break;
      }
      case 'signature_delta': {
        const b = this.building.get(e.index)?.content;
        if (b?.type === 'thinking') b.signature = (b.signature ?? '') + e.signature;
        break;
      }
      case 'tool_input_delta': {
        const b = this.building.get(e.index);
        if (b) b.json = (b.json ?? '') + e.partialJson;
        break;
      }
      default:
        break;
    }
  }

  /** The blocks in order, tool inputs parsed. */
  blocks(): CollectedBlock[] {
    return [...this.building.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, { content, raw, json }]) => {
        const whole = json === undefined ? content : withInput(content, parseInput(json));
        return raw ? { content: whole, raw } : { content: whole };
      });
  }

  content(): CanonicalContent[] {
    return this.blocks().map((b) => b.content);
  }
}

function parseInput(json: string): unknown {
  try {
    return json ? JSON.parse(json) : {};
  } catch {
    return { _raw: json };
  }
}

function withInput(content: CanonicalContent, input: unknown): CanonicalContent {
  if (content.type === 'tool_use') return { ...content, input };
  // A server tool call streams its input like a tool_use does.
  if (content.type === 'other') return { type: 'other', raw: { ...content.raw, input } };
  return content;
}
