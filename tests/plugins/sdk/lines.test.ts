/** SDK mode's stdin lines with a small cap: whole lines parse, a longer one is dropped as it comes and named. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines } from '../../../plugins/sdk/lines.js';

async function read(chunks: Array<string | Buffer>, max: number) {
  const input = new PassThrough();
  const items = (async () => {
    const out = [];
    for await (const item of readLines(input, 'stdin', max)) out.push(item);
    return out;
  })();
  for (const chunk of chunks) input.write(chunk);
  input.end();
  return items;
}

describe('sdk readLines', () => {
  it('parses lines of up to the cap across chunks, a multi-byte character split between them included', async () => {
    const euro = Buffer.from('{"a":"€"}\n');
    expect(await read([euro.subarray(0, 7), euro.subarray(7), '{"b":', '1}\n', '\n', '{"c":2}'], 12)).toEqual([
      { where: 'stdin line 1', value: { a: '€' } },
      { where: 'stdin line 2', value: { b: 1 } },
      { where: 'stdin line 4', value: { c: 2 } },
    ]);
  });

  it('drops a longer line and names it, then goes on; a long last line without a newline too', async () => {
    const tooLong = `longer than ${10 / (1024 * 1024)} MiB (10 bytes), the limit for one line; skipped`;
    expect(await read(['{"a":1}\n', 'x'.repeat(8), 'x'.repeat(8), '\n{"b":2}\n', 'y'.repeat(20)], 10)).toEqual([
      { where: 'stdin line 1', value: { a: 1 } },
      { where: 'stdin line 2', error: tooLong },
      { where: 'stdin line 3', value: { b: 2 } },
      { where: 'stdin line 4', error: tooLong },
    ]);
  });
});
