import type { CanonicalContent, CanonicalEvent } from './canonical';

/** Folds a canonical event stream into whole content blocks (for non-streamed replies). */
export class ResponseCollector {
  private readonly blocks = new Map<number, CanonicalContent & { json?: string }>();

  push(e: CanonicalEvent): void {
    switch (e.type) {
      case 'block_start':
        if (e.block.type === 'text') this.blocks.set(e.index, { type: 'text', text: '' });
        else if (e.block.type === 'thinking') this.blocks.set(e.index, { type: 'thinking', thinking: '' });
        else this.blocks.set(e.index, { type: 'tool_use', id: e.block.id, name: e.block.name, input: {}, json: '' });
        break;
      case 'text_delta': {
        const b = this.blocks.get(e.index);
        if (b?.type === 'text') b.text += e.text;
        break;
      }
      case 'thinking_delta': {
        const b = this.blocks.get(e.index);
        if (b?.type === 'thinking') b.thinking += e.text;
        break;
      }
      case 'signature_delta': {
        const b = this.blocks.get(e.index);
        if (b?.type === 'thinking') b.signature = (b.signature ?? '') + e.signature;
        break;
      }
      case 'tool_input_delta': {
        const b = this.blocks.get(e.index);
        if (b?.type === 'tool_use') b.json = (b.json ?? '') + e.partialJson;
        break;
      }
      default:
        break;
    }
  }

  content(): CanonicalContent[] {
    return [...this.blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, b]) => {
        if (b.type !== 'tool_use') return b;
        const { json, ...block } = b;
        let input: unknown = {};
        try {
          input = json ? JSON.parse(json) : {};
        } catch {
          input = { _raw: json };
        }
        return { ...block, input };
      });
  }
}
