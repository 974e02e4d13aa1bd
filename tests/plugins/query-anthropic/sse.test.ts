/**
 * The event-stream decoder that replaced the SDK's `Stream` on the response path: it must split any byte stream
 * into the same events as the SDK's own decoder (`Stream.rawEvents`), however the bytes are cut into chunks.
 */
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import { describe, expect, it } from 'vitest';
import { SseDecoder, type ServerSentEvent } from '../../../plugins/query-anthropic/sse.js';

function decode(chunks: Uint8Array[]): ServerSentEvent[] {
  const decoder = new SseDecoder();
  const out: ServerSentEvent[] = [];
  for (const chunk of chunks) out.push(...decoder.push(chunk));
  out.push(...decoder.end());
  return out;
}

async function sdkDecode(chunks: Uint8Array[]): Promise<ServerSentEvent[]> {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const out: ServerSentEvent[] = [];
  for await (const sse of Stream.rawEvents(new Response(body))) out.push({ event: sse.event, data: sse.data });
  return out;
}

/** A deterministic pseudo-random source, so a failing case can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function cut(bytes: Uint8Array, next: () => number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(next() * 12);
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

const PIECES = ['event: ', 'event:', 'data: ', 'data:', 'data', ': comment', 'id: 7', 'retry: 10', 'message_start', '{"a":"é€😀"}', ' x', '\uFEFF', 'ping', 'error', '{"type":"ping"}'];
const ENDS = ['\n', '\r\n', '\r', '\n\n', '\r\n\r\n', '\r\r'];

describe('the event-stream decoder', () => {
  it('reads the events of a Messages stream', () => {
    const text = 'event: message_start\ndata: {"type":"message_start"}\n\nevent: ping\ndata: {"type": "ping"}\n\n: keep-alive\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
    expect(decode([Buffer.from(text)])).toEqual([
      { event: 'message_start', data: '{"type":"message_start"}' },
      { event: 'ping', data: '{"type": "ping"}' },
      { event: 'message_stop', data: '{"type":"message_stop"}' },
    ]);
  });

  it('joins data lines, keeps a CR that ends a chunk until the next one, and a character cut between chunks', () => {
    const bytes = Buffer.from('event: x\r\ndata: a\r\ndata: b€\r\n\r\n');
    const euro = bytes.indexOf(0xe2);
    const cr = bytes.indexOf(0x0d);
    const chunks = [bytes.subarray(0, cr + 1), bytes.subarray(cr + 1, euro + 1), bytes.subarray(euro + 1)];
    expect(decode(chunks)).toEqual([{ event: 'x', data: 'a\nb€' }]);
  });

  it('does not hand over an event the body ends before its blank line', () => {
    expect(decode([Buffer.from('event: a\ndata: 1\n\nevent: b\ndata: 2')])).toEqual([{ event: 'a', data: '1' }]);
  });

  it('splits any stream into the same events as the SDK, however it is cut', async () => {
    const next = random(16);
    for (let round = 0; round < 300; round++) {
      let text = '';
      const lines = 1 + Math.floor(next() * 12);
      for (let i = 0; i < lines; i++) {
        const parts = Math.floor(next() * 3);
        for (let j = 0; j < parts; j++) text += PIECES[Math.floor(next() * PIECES.length)];
        text += ENDS[Math.floor(next() * ENDS.length)];
      }
      if (next() < 0.3) text += PIECES[Math.floor(next() * PIECES.length)];
      const bytes = Buffer.from(text, 'utf8');
      const chunks = cut(bytes, next);
      expect({ round, text, events: decode(chunks) }).toEqual({ round, text, events: await sdkDecode(chunks) });
    }
  });
});
