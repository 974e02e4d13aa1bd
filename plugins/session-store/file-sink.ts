/** The file store's record sink: a session's JSONL file, large tool outputs in side files beside it. */
import type { MessageParam } from '../../kernel/index.js';
import type { RecordSink } from './recorder.js';
import type { HeaderRecord, SessionRecord, SideRef } from './records.js';
import { extractSideFiles, type SideWriter } from './side-files.js';
import type { SessionWriter } from './writer.js';

export class FileSink implements RecordSink {
  constructor(
    readonly writer: SessionWriter,
    readonly side: SideWriter,
  ) {}

  ready(header: HeaderRecord): void {
    if (this.writer.isOpen) return;
    const { created } = this.writer.open();
    if (created) this.writer.append(header);
  }

  append(record: SessionRecord): void {
    this.writer.append(record);
  }

  aside(message: MessageParam, m?: number): { message: MessageParam; refs: SideRef[] } {
    return extractSideFiles(message, this.side, m);
  }

  nextLine(): number {
    return this.writer.lines + 1;
  }
}
