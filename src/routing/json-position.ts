/**
 * Offset of the first syntax error in `text`. JSON.parse on Node 20 does not
 * always say where it failed ("Unexpected token '}', ... is not valid JSON"),
 * and an operator editing a file needs a line and column.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const stop = new Error('stop');
  const space = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (char: string): void => {
    space();
    if (text[i] !== char) throw stop;
    i++;
  };
  const string = (): void => {
    expect('"');
    for (;;) {
      const char = text[i];
      if (char === undefined || char < ' ') throw stop;
      if (char === '"') return void i++;
      if (char === '\\') {
        if (text[i + 1] === 'u' ? !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)) : !'"\\/bfnrt'.includes(text[i + 1] ?? 'x')) throw stop;
        i += text[i + 1] === 'u' ? 6 : 2;
      } else i++;
    }
  };
  const value = (): void => {
    space();
    const char = text[i];
    if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']';
      i++;
      space();
      if (text[i] === close) return void i++;
      for (;;) {
        if (close === '}') {
          string();
          expect(':');
        }
        value();
        space();
        if (text[i] === ',') i++;
        else return expect(close);
      }
    }
    if (char === '"') return string();
    const literal = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null/y;
    literal.lastIndex = i;
    if (!literal.test(text)) throw stop;
    i = literal.lastIndex;
  };
  try {
    value();
    space();
    return i < text.length ? i : text.length;
  } catch {
    return i;
  }
}

export function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}
