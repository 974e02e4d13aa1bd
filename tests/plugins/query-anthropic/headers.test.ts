import { describe, expect, it } from 'vitest';
import { FetchHeaders, FormDataByBrand } from '../../../plugins/query-anthropic/headers.js';
import { StreamResponse } from '../../../plugins/query-anthropic/transport.js';

const lines = (h: { entries(): Iterable<[string, string]> }) => [...h.entries()];

describe('FetchHeaders', () => {
  it('reads, writes and iterates as the platform Headers does', () => {
    const ops = (h: Headers | FetchHeaders) => {
      h.append('X-B', ' one ');
      h.append('x-b', 'two');
      h.set('Content-Type', 'application/json');
      h.append('Set-Cookie', 'a=1');
      h.append('set-cookie', 'b=2');
      h.append('A-First', 'z');
      h.delete('a-first');
      h.append('accept', '*/*');
      return { lines: lines(h), get: h.get('X-b'), cookie: h.get('set-cookie'), cookies: h.getSetCookie(), has: [h.has('CONTENT-TYPE'), h.has('a-first')], missing: h.get('nope'), keys: [...h.keys()], values: [...h.values()] };
    };
    expect(ops(new FetchHeaders())).toEqual(ops(new Headers()));
  });

  it('takes the same inits, and forEach passes (value, key, headers)', () => {
    const inits: HeadersInit[] = [{ 'X-A': '1', b: '2' }, [['X-A', '1'], ['x-a', '2']], new Headers({ c: '3' })];
    for (const init of inits) expect(lines(new FetchHeaders(init))).toEqual(lines(new Headers(init)));
    const h = new FetchHeaders({ a: '1' });
    expect(lines(new FetchHeaders(h))).toEqual([['a', '1']]);
    const seen: unknown[] = [];
    h.forEach((value, key, parent) => seen.push([value, key, parent === h]));
    expect(seen).toEqual([['1', 'a', true]]);
    expect(Object.prototype.toString.call(h)).toBe('[object Headers]');
  });

  it('rejects what the platform Headers rejects', () => {
    for (const [name, value] of [['bad name', 'x'], ['x', 'a\nb'], ['', 'x'], ['x', 'a\0b']]) {
      expect(() => new Headers().append(name, value)).toThrow(TypeError);
      expect(() => new FetchHeaders().append(name, value)).toThrow(TypeError);
    }
    expect(() => new FetchHeaders([['a'] as unknown as [string, string]])).toThrow(TypeError);
  });

  it('names the header of a refused value, never the value itself (an API key with a stray newline)', () => {
    const secret = 'sk-ant-secret\nx-evil: 1';
    expect(() => new FetchHeaders({ 'x-api-key': secret })).toThrow('Headers: the value of "x-api-key" holds a line break, NUL or a character above U+00FF');
    let message = '';
    try {
      new FetchHeaders().set('authorization', `Bearer ${secret}`);
    } catch (err) {
      message = String(err);
    }
    expect(message).toContain('the value of "authorization"');
    expect(message).not.toContain('sk-ant-secret');
  });

  it('is an instance of itself and accepts platform Headers as instances', () => {
    expect(new FetchHeaders() instanceof FetchHeaders).toBe(true);
    expect(new Headers() instanceof FetchHeaders).toBe(true);
    expect({} instanceof FetchHeaders).toBe(false);
  });
});

describe('FormDataByBrand', () => {
  it('makes a platform FormData and recognises one', () => {
    const form = new FormDataByBrand();
    expect(form).toBeInstanceOf(FormData);
    expect(new FormData() instanceof FormDataByBrand).toBe(true);
    expect({} instanceof FormDataByBrand).toBe(false);
  });
});

describe('StreamResponse', () => {
  const stream = (...chunks: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });
  const init = (status = 200) => ({ status, statusText: 'OK', headers: new FetchHeaders({ 'content-type': 'application/json' }), url: 'http://x/' });

  it('reads its body once, as text or JSON, and clones before reading', async () => {
    const response = new StreamResponse(stream('{"a":', '1}'), init());
    expect(response.ok).toBe(true);
    const copy = response.clone();
    expect(await response.json()).toEqual({ a: 1 });
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
    expect(await copy.text()).toBe('{"a":1}');
    expect(new Uint8Array(await new StreamResponse(stream('ab'), init()).arrayBuffer())).toEqual(new Uint8Array([97, 98]));
    expect((await new StreamResponse(stream('ab'), init()).blob()).type).toBe('application/json');
  });

  it('has no body for an empty answer, and is not ok outside 2xx', async () => {
    const response = new StreamResponse(null, init(404));
    expect(response.ok).toBe(false);
    expect(response.body).toBeNull();
    expect(await response.text()).toBe('');
  });

  it('counts a body locked by a reader as used', () => {
    const response = new StreamResponse(stream('x'), init());
    response.body!.getReader();
    expect(response.bodyUsed).toBe(true);
  });
});
