/** The guard between `keel acp`'s stdin and the ACP SDK, with a small cap: whole lines pass, the first longer one stops it. */
import { describe, expect, it } from 'vitest';
import { describeLimit, lineLimit } from '../../../plugins/acp/line-limit.js';

async function through(chunks: string[], max: number): Promise<{ out: string; overflowed: number; error?: string }> {
  let overflowed = 0;
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
  const reader = source.pipeThrough(lineLimit(max, () => overflowed++)).getReader();
  let out = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { out, overflowed };
      out += new TextDecoder().decode(value);
    }
  } catch (err) {
    return { out, overflowed, error: (err as Error).message };
  }
}

describe('acp line limit', () => {
  it('passes lines of up to the cap, however they are split into chunks', async () => {
    expect(await through(['12345\n1234', '5\n', '\n12', '3'], 5)).toEqual({ out: '12345\n12345\n\n123', overflowed: 0 });
  });

  it('stops at the first line over the cap, in one chunk or across several, and says why', async () => {
    expect(await through(['12\n123456\n12\n'], 5)).toEqual({ out: '', overflowed: 1, error: `an incoming line is longer than ${describeLimit(5)}` });
    expect(await through(['12\n', '123', '456', '\n12\n'], 5)).toMatchObject({ out: '12\n123', overflowed: 1 });
    expect(await through(['123', '45', '6'], 5)).toMatchObject({ overflowed: 1 });
  });

  it('names the limit in MiB and bytes', () => {
    expect(describeLimit(32 * 1024 * 1024)).toBe('32 MiB (33554432 bytes)');
  });
});
