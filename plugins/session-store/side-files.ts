/**
 * Tool outputs above a size threshold live in side files next to the session, so JSONL records stay small.
 * A side file is named after its tool_use id and a hash of its content, so writing it twice is a no-op.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { ensureDir, type ContentBlockParam, type MessageParam } from '../../kernel/index.js';
import { SIDE_FILE, toolOutputProblem, type SideRef } from './records.js';
import type { Redactor } from './secrets.js';
import { syncDir } from './writer.js';

export interface SideWriter {
  dir: string;
  /** Outputs whose JSON is longer than this many bytes go to a side file. */
  threshold: number;
  fsync: boolean;
  redact: Redactor;
}

/** Returns the message with big tool_result contents replaced by refs (a copy only when something moved). */
export function extractSideFiles(message: MessageParam, side: SideWriter, m?: number): { message: MessageParam; refs: SideRef[] } {
  const refs: SideRef[] = [];
  if (typeof message.content === 'string') return { message, refs };
  let content: ContentBlockParam[] | undefined;
  message.content.forEach((block, b) => {
    if (block.type !== 'tool_result' || block.content === undefined) return;
    const json = JSON.stringify(block.content);
    if (json.length <= side.threshold && Buffer.byteLength(json) <= side.threshold) return;
    const hash = createHash('sha256').update(json).digest('hex').slice(0, 12);
    const file = `${block.tool_use_id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80)}-${hash}.json`;
    writeSideFile(side, file, side.redact(json));
    content ??= message.content.slice() as ContentBlockParam[];
    content[b] = { ...block, content: '' };
    refs.push(m === undefined ? { b, file } : { m, b, file });
  });
  return { message: content ? ({ ...message, content } as MessageParam) : message, refs };
}

function writeSideFile(side: SideWriter, file: string, text: string): void {
  const target = path.join(side.dir, file);
  if (existsSync(target)) return;
  ensureDir(side.dir);
  // Written whole under a temporary name, then renamed: a crash never leaves a half side file behind a ref.
  const temp = `${target}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, text);
    if (side.fsync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, target);
  if (side.fsync) syncDir(side.dir);
}

/** Puts side-file contents back into messages, in place. A missing side file becomes a visible notice saying so. */
export function resolveSideFiles(messages: MessageParam[], refs: SideRef[] | undefined, dir: string, warn: (message: string) => void): void {
  if (!refs) return;
  for (const ref of refs) {
    const message = messages[ref.m ?? 0];
    const block = message && typeof message.content !== 'string' ? message.content[ref.b] : undefined;
    if (!block || block.type !== 'tool_result' || !SIDE_FILE.test(ref.file)) {
      warn(`side-file ref ${ref.file} points at no tool result, ignored`);
      continue;
    }
    const file = path.join(dir, ref.file);
    try {
      const content: unknown = JSON.parse(readFileSync(file, 'utf8'));
      const problem = toolOutputProblem(content);
      if (problem) throw new Error(`it holds ${problem}`);
      block.content = content as typeof block.content;
    } catch (err) {
      warn(`side file ${file} is missing or unreadable (${(err as Error).message.split('\n')[0]}); the tool output is replaced by a note`);
      block.content = `[tool output unavailable: side file ${ref.file} is missing or unreadable]`;
    }
  }
}
