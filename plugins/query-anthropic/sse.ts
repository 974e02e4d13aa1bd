/**
 * Server-sent events from a response body's chunks, split synchronously: every event a chunk completes is handed
 * over before the next chunk is read, so a response costs one await per chunk instead of two async generators'
 * steps per event (the SDK's `Stream`). Lines end in LF, CRLF or CR; a line starting with a byte-order mark loses
 * it; only the `event` and `data` fields are read (comments and other fields are skipped); a field's value drops
 * one leading space; a blank line ends an event, as the SDK's decoder reads them.
 */
import { StringDecoder } from 'node:string_decoder';

export interface ServerSentEvent {
  /** The `event` field, or null when the event named none. */
  event: string | null;
  /** The `data` lines joined with `\n`. */
  data: string;
}

export class SseDecoder {
  private readonly decoder = new StringDecoder('utf8');
  /** Text after the last complete line. */
  private rest = '';
  private event: string | null = null;
  private data: string[] = [];

  /** Decodes `chunk` and returns the events it completes. */
  push(chunk: Uint8Array): ServerSentEvent[] {
    return this.lines(this.rest + this.decoder.write(chunk as Buffer), false);
  }

  /** The body ended: the events its last unterminated line completes. */
  end(): ServerSentEvent[] {
    const text = this.rest + this.decoder.end();
    this.rest = '';
    if (!text) return [];
    return this.lines(`${text.replace(/\r$/, '')}\n`, true);
  }

  private lines(text: string, final: boolean): ServerSentEvent[] {
    const out: ServerSentEvent[] = [];
    let start = 0;
    if (!text.includes('\r')) {
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        this.take(text.slice(start, end), out);
        start = end + 1;
      }
    } else {
      for (let i = 0; i < text.length; i++) {
        const char = text.charCodeAt(i);
        if (char !== 0x0a && char !== 0x0d) continue;
        // A CR that ends the text may be the first half of a CRLF: wait for the next chunk.
        if (char === 0x0d && i + 1 === text.length && !final) break;
        this.take(text.slice(start, i), out);
        if (char === 0x0d && text.charCodeAt(i + 1) === 0x0a) i++;
        start = i + 1;
      }
    }
    this.rest = text.slice(start);
    return out;
  }

  private take(line: string, out: ServerSentEvent[]): void {
    if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    if (!line) {
      if (!this.event && this.data.length === 0) return;
      out.push({ event: this.event, data: this.data.join('\n') });
      this.event = null;
      this.data = [];
      return;
    }
    const colon = line.indexOf(':');
    if (colon === 0) return;
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== 'event' && field !== 'data') return;
    const value = colon === -1 ? '' : line.slice(line.charCodeAt(colon + 1) === 0x20 ? colon + 2 : colon + 1);
    if (field === 'event') this.event = value;
    else this.data.push(value);
  }
}
