import { Writable } from 'node:stream';

/** A log destination that keeps every line written to it in `lines`. */
export function lineSink(lines: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(chunk.toString());
      callback();
    },
  });
}
