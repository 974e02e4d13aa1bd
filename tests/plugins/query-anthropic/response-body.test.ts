/** The body the transport hands the SDK: chunks pushed as they arrive, read once, by iteration or a reader. */
import { describe, expect, it } from 'vitest';
import { ResponseBody } from '../../../plugins/query-anthropic/response-body.js';
import { FetchHeaders } from '../../../plugins/query-anthropic/headers.js';
import { StreamResponse } from '../../../plugins/query-anthropic/transport.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (chunks: Uint8Array[]) => chunks.map((c) => new TextDecoder().decode(c)).join('');

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const chunk of body) out.push(chunk);
  return out;
}

describe('ResponseBody', () => {
  it('gives the chunks pushed before and while it is read, in order, and ends', async () => {
    const body = new ResponseBody();
    body.push(bytes('a'));
    expect(body.locked).toBe(false);
    const reading = readAll(body);
    expect(body.locked).toBe(true);
    body.push(bytes('b'));
    await new Promise((resolve) => setImmediate(resolve));
    body.push(bytes('c'));
    body.end();
    body.push(bytes('late'));
    expect(text(await reading)).toBe('abc');
  });

  it('fails a reader with the error next, dropping what was not read, and ignores a failure after the end', async () => {
    const body = new ResponseBody();
    const reader = body.getReader();
    body.push(bytes('a'));
    expect(text([(await reader.read()).value!])).toBe('a');
    body.push(bytes('unread'));
    const cut = new TypeError('terminated');
    body.fail(cut);
    await expect(reader.read()).rejects.toBe(cut);
    const ended = new ResponseBody();
    ended.end();
    ended.fail(new Error('too late'));
    expect(await readAll(ended)).toEqual([]);
  });

  it('tells the transport once when a reader stops early, by return or cancel', async () => {
    let cancelled = 0;
    const body = new ResponseBody(() => cancelled++);
    body.push(bytes('a'));
    body.push(bytes('b'));
    for await (const chunk of body) {
      expect(text([chunk])).toBe('a');
      break;
    }
    await body.cancel();
    expect(cancelled).toBe(1);
    const other = new ResponseBody(() => cancelled++);
    await other.getReader().cancel();
    expect(cancelled).toBe(2);
    const whole = new ResponseBody(() => cancelled++);
    whole.end();
    await readAll(whole);
    await whole.cancel();
    expect(cancelled).toBe(2);
  });

  it('reads as a Response body: text, JSON, a clone read beside it, and a body used once', async () => {
    const body = new ResponseBody();
    const response = new StreamResponse(body, { status: 200, statusText: 'OK', headers: new FetchHeaders({ 'content-type': 'application/json' }), url: 'http://127.0.0.1/' });
    const clone = response.clone();
    body.push(bytes('{"a":'));
    body.push(bytes('1}'));
    body.end();
    expect(await response.json()).toEqual({ a: 1 });
    expect(await clone.text()).toBe('{"a":1}');
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow('Body is unusable');
  });

  it('passes a failure to both halves of a tee', async () => {
    const body = new ResponseBody();
    const [left, right] = body.tee();
    body.push(bytes('x'));
    body.fail(new TypeError('terminated'));
    await expect(readAll(left)).rejects.toThrow('terminated');
    await expect(readAll(right)).rejects.toThrow('terminated');
  });
});
