/**
 * An Anthropic-compatible endpoint written byte by byte with node:net, for faults an HTTP server library will not
 * make: a content-length that never fills, a chunked body without its last chunk, a kept-alive connection closed
 * under a request, a 1 MB head, bare-LF heads. Each request to /v1/messages is answered by `answer(n, conn)`, `n`
 * counting from 1 over all connections.
 */
import net from 'node:net';

export interface RawConnection {
  /** 1 for the first connection the server accepted. */
  number: number;
  socket: net.Socket;
  /** Requests this connection carried so far (1 for the first). */
  requests: number;
  closed: Promise<void>;
}

export interface RawRequest {
  head: string;
  body: string;
  connection: number;
}

export interface RawAnthropicServer {
  url: string;
  connections: RawConnection[];
  requests: RawRequest[];
  close(): Promise<void>;
}

/** What to do with a request: write these bytes (then maybe end or destroy the connection). */
export interface RawAnswer {
  bytes: Array<string | Buffer>;
  after?: 'keep' | 'end' | 'destroy';
}

export async function startRawAnthropic(answer: (n: number, conn: RawConnection) => RawAnswer): Promise<RawAnthropicServer> {
  const state: RawAnthropicServer = { url: '', connections: [], requests: [], close: async () => undefined };
  let messages = 0;
  const server = net.createServer((socket) => {
    const conn: RawConnection = { number: state.connections.length + 1, socket, requests: 0, closed: new Promise((resolve) => socket.on('close', () => resolve())) };
    state.connections.push(conn);
    socket.on('error', () => undefined);
    let buffer = Buffer.alloc(0);
    socket.on('data', (data) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffer.toString('latin1', 0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        const body = buffer.toString('utf8', end + 4, end + 4 + length);
        buffer = buffer.subarray(end + 4 + length);
        conn.requests++;
        state.requests.push({ head, body, connection: conn.number });
        if (!/^POST \/v1\/messages/.test(head)) {
          socket.write('HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
          continue;
        }
        const { bytes, after = 'keep' } = answer(++messages, conn);
        for (const piece of bytes) socket.write(piece);
        if (after === 'end') socket.end();
        if (after === 'destroy') socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const conn of state.connections) conn.socket.destroy();
      server.close(() => resolve());
    });
  return state;
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

/** The SSE text of a whole streamed message: message_start … message_stop. */
export function sseMessage(blocks: Block[], id = `msg_${Math.random().toString(36).slice(2)}`): string {
  const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  let out = event('message_start', {
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 0 } },
  });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      out += event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      out += event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
    } else {
      out += event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      out += event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    out += event('content_block_stop', { type: 'content_block_stop', index });
  });
  const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  out += event('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 3 } });
  out += event('message_stop', { type: 'message_stop' });
  return out;
}

const SSE_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n';

/** A whole response with a content-length: `extra` more than the body, so the body never fills when it is positive. */
export function lengthResponse(body: string, extra = 0): string {
  return `${SSE_HEAD}content-length: ${Buffer.byteLength(body) + extra}\r\n\r\n${body}`;
}

/** A chunked response; without `last` the terminating zero-length chunk is left out. */
export function chunkedResponse(body: string, last = true): string {
  return `${SSE_HEAD}transfer-encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n${last ? '0\r\n\r\n' : ''}`;
}
