/**
 * The cap on one incoming ACP message (one line of newline-delimited JSON-RPC). A client — or anything else writing
 * to Keel's stdin — that sends a line without end must not make Keel buffer without bound, and must learn why it was
 * cut off: the guard sits between stdin and the SDK's reader, passes whole lines, and on the first line longer than
 * the cap passes nothing more and reports it (one line on stderr, a JSON-RPC error to the client, exit 1).
 */

/**
 * 32 MiB: the Anthropic Messages API's own limit for a whole request, so any prompt the model could be sent — pasted
 * images as base64 included (5 MB each at most) — fits in one message, and anything larger could never be sent on.
 */
export const ACP_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

const NEWLINE = 0x0a;

/** `32 MiB (33554432 bytes)`, for messages. */
export function describeLimit(bytes: number): string {
  return `${bytes / (1024 * 1024)} MiB (${bytes} bytes)`;
}

/**
 * A pass-through that counts the bytes of the line in progress. Lines up to `maxBytes` (the newline not counted) go
 * through as they come. At the first longer one, nothing more is passed on (not even the rest of that chunk):
 * `onOverflow` is called and the stream fails, which cancels its source, so nothing more is read either.
 */
export function lineLimit(maxBytes: number, onOverflow: () => void): TransformStream<Uint8Array, Uint8Array> {
  let lineBytes = 0;
  let over = false;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (over) return;
      let start = 0;
      for (;;) {
        const newline = chunk.indexOf(NEWLINE, start);
        const end = newline === -1 ? chunk.byteLength : newline;
        lineBytes += end - start;
        if (lineBytes > maxBytes) {
          over = true;
          onOverflow();
          // An error, not an end: the SDK's reader stops at once, without trying to parse the bytes it holds.
          controller.error(new Error(`an incoming line is longer than ${describeLimit(maxBytes)}`));
          return;
        }
        if (newline === -1) break;
        lineBytes = 0;
        start = newline + 1;
      }
      controller.enqueue(chunk);
    },
  });
}
