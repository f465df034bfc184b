import type { CanonicalContent } from './canonical';

/**
 * The words a model reads in some content, one string per piece: text,
 * documents given as text, search results, and what tool results hold
 * (nested). Images, binary documents and blocks of other kinds hold none.
 */
export function contentTexts(content: readonly CanonicalContent[], into: string[] = []): string[] {
  for (const block of content) {
    switch (block.type) {
      case 'text':
        into.push(block.text);
        break;
      case 'tool_result':
        contentTexts(block.content, into);
        break;
      case 'document':
        if (block.title !== undefined) into.push(block.title);
        if (block.context !== undefined) into.push(block.context);
        if (block.source.kind === 'text') into.push(block.source.data);
        else if (block.source.kind === 'content') contentTexts(block.source.content, into);
        break;
      case 'search_result':
        into.push(block.title);
        for (const text of block.texts) into.push(text);
        break;
      default:
        break;
    }
  }
  return into;
}

/** Images in some content, tool results and documents included. */
export function countImages(content: readonly CanonicalContent[]): number {
  let images = 0;
  for (const block of content) {
    if (block.type === 'image') images += 1;
    else if (block.type === 'tool_result') images += countImages(block.content);
    else if (block.type === 'document' && block.source.kind === 'content') images += countImages(block.source.content);
  }
  return images;
}
