/**
 * The request body without re-serialising the history on every turn. The Messages API is stateless, so each
 * request carries the whole conversation; but history messages are replaced, never edited, so each one is
 * serialised to UTF-8 once, into one growing buffer that every later request sends from.
 *
 * How: the SDK still builds the body (model, system, tools, `stream`, whatever it adds), but the `messages` array
 * it serialises says, through `toJSON`, only a token unique to this process. The transport swaps that token for
 * the messages' stored bytes (`[` m1 `,` m2 … `]`), so the bytes sent are those `JSON.stringify` of the whole
 * body would give.
 *
 * The array the SDK is given holds no messages unless tracing wants them (`visible`): without tracing the SDK reads
 * `messages` only to look for objects its own beta helpers (MCP, tool runner) marked, for a telemetry header
 * (`x-stainless-helper`), a pass over every block of the history on every request. Keel builds its messages
 * itself, never with those helpers, so that pass always finds nothing.
 */
import { randomBytes } from 'node:crypto';
import type { MessageParam } from '../../kernel/index.js';

/** `fetchOptions` key for the pre-built parts (messages, tools) of a request. */
export const PREBUILT = Symbol.for('keel.query-anthropic.prebuilt');

/** A part of the body the SDK serialises as a token, and the bytes the transport puts in its place. */
export interface PrebuiltPart {
  /** The JSON string the SDK writes in place of the part. */
  token: string;
  /** The part's bytes, in pieces (for messages: `[`, the messages with `,` between them, `]`). */
  chunks(): Buffer[];
}

// Drawn for each request, never once per module: the binary's start-up snapshot keeps module state from the build,
// so a module-level token would be the same in every run of every install built by that one build.
const token = (kind: 'messages' | 'tools') => `keel-prebuilt-${kind}:${randomBytes(16).toString('hex')}`;
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** A message's JSON, as `JSON.stringify` of the array holding it writes it. */
const json = (message: MessageParam) => JSON.stringify(message);

/**
 * The joined bytes of a conversation's settled messages (`m1,m2,…`), grown by appending only: a request's
 * history is the previous one's plus a few messages, so each request copies only what is new. Bytes already
 * handed out are never overwritten (a request still in flight may hold them); a history that diverges (rewritten,
 * compacted) starts a new buffer. Keyed by the conversation's first message.
 */
interface Joined {
  messages: MessageParam[];
  /** Each message's content when it was appended: a message given new content is not the one on file. */
  contents: MessageParam['content'][];
  bytes: Buffer;
  length: number;
}

const joinedBy = new WeakMap<MessageParam, Joined>();

/** Messages that carry a breakpoint this turn are copies made for this request only: they are not settled. */
const settled = (message: MessageParam) => typeof message.content === 'string' || !message.content.some((block) => 'cache_control' in block);

/** Appends a message's UTF-8 JSON (after a comma) in place; the buffer is never shrunk or rewritten. */
function append(joined: Joined, text: string): void {
  const need = joined.length + Buffer.byteLength(text, 'utf8') + 1;
  if (need > joined.bytes.length) {
    const grown = Buffer.allocUnsafeSlow(Math.max(need, joined.bytes.length * 2, 16_384));
    joined.bytes.copy(grown, 0, 0, joined.length);
    joined.bytes = grown;
  }
  if (joined.length > 0) joined.bytes[joined.length++] = 0x2c; // ','
  joined.length += joined.bytes.write(text, joined.length, 'utf8');
}

/** The messages array's bytes: the settled prefix from the joined buffer, then the rest one by one. */
function messageChunks(messages: MessageParam[]): Buffer[] {
  if (messages.length === 0) return [OPEN, CLOSE];
  let joined = joinedBy.get(messages[0]);
  let k = 0;
  if (joined) {
    const n = Math.min(joined.messages.length, messages.length);
    while (k < n && joined.messages[k] === messages[k] && joined.contents[k] === messages[k].content) k++;
    // Diverged: start again rather than overwrite bytes a request may still be sending.
    if (k < joined.messages.length) joined = undefined;
  }
  if (!joined) {
    joined = { messages: [], contents: [], bytes: Buffer.alloc(0), length: 0 };
    joinedBy.set(messages[0], joined);
    k = 0;
  }
  while (k < messages.length && settled(messages[k])) {
    append(joined, json(messages[k]));
    joined.messages.push(messages[k]);
    joined.contents.push(messages[k].content);
    k++;
  }
  const out: Buffer[] = [OPEN, joined.bytes.subarray(0, joined.length)];
  for (let i = k; i < messages.length; i++) {
    if (i > 0) out.push(COMMA);
    out.push(Buffer.from(json(messages[i]), 'utf8'));
  }
  out.push(CLOSE);
  return out;
}

/**
 * An array for the SDK that serialises as the token (a copy of `messages` when `visible`, else empty: see above),
 * and the bytes the transport puts in its place. A message with a `toJSON` of its own is serialised by it, as
 * `JSON.stringify` would.
 */
export function prebuild(messages: MessageParam[], visible = false): { messages: MessageParam[]; prebuilt: PrebuiltPart } {
  const placeholder = token('messages');
  const marked = Object.defineProperty(visible ? [...messages] : [], 'toJSON', { value: () => placeholder, enumerable: false });
  return { messages: marked, prebuilt: { token: JSON.stringify(placeholder), chunks: () => messageChunks(messages) } };
}

/** The JSON of tool lists, by list: placeBreakpoints gives the same (frozen) list while the tools stay the same. */
const toolsJson = new WeakMap<readonly object[], Buffer>();

/**
 * A copy of `tools` that serialises as a token, and the list's bytes, serialised once per list: the tool schemas
 * (about 10 KB with the default preset) are the same on every request of a conversation.
 */
export function prebuildTools<T extends object>(tools: readonly T[]): { tools: T[]; prebuilt: PrebuiltPart } {
  const placeholder = token('tools');
  const marked = Object.defineProperty([...tools], 'toJSON', { value: () => placeholder, enumerable: false });
  const chunks = () => {
    let bytes = toolsJson.get(tools);
    if (!bytes) toolsJson.set(tools, (bytes = Buffer.from(JSON.stringify(tools), 'utf8')));
    return [bytes];
  };
  return { tools: marked, prebuilt: { token: JSON.stringify(placeholder), chunks } };
}

/** The body as buffers, each part's token replaced by its bytes; an error unless the body holds each token once. */
export function splicePrebuilt(body: string, parts: PrebuiltPart[]): Buffer[] {
  const found = parts.map((part) => {
    const at = body.indexOf(part.token);
    if (at < 0 || body.indexOf(part.token, at + 1) >= 0) throw new TypeError('keel transport: the request body does not hold the placeholder of a pre-built part exactly once');
    return { at, part };
  });
  found.sort((a, b) => a.at - b.at);
  const out: Buffer[] = [];
  let from = 0;
  for (const { at, part } of found) {
    out.push(Buffer.from(body.slice(from, at), 'utf8'), ...part.chunks());
    from = at + part.token.length;
  }
  out.push(Buffer.from(body.slice(from), 'utf8'));
  return out;
}
