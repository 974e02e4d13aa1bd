/**
 * The build drops from the start-up snapshot blob the code cache of Node built-ins the snapshot already holds
 * evaluated (scripts/snapshot-code-cache.mjs). The blob's layout is Node's; these tests build blobs laid out the
 * same way and check that nothing before the code cache changes, and that anything else is refused with a reason.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readBuiltinCodeCache, withBuiltinCodeCache } from '../../scripts/snapshot-code-cache.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};
const str = (s: string) => Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);

/** A blob as Node lays it out: magic, metadata, V8 data, Node's own data (`middle`), then the code cache. */
function blobOf(entries: Array<[string, Buffer]>, middle = Buffer.from([3, 0, 0, 0, 0, 0, 0, 0, 9, 9, 1, 2])): Buffer {
  const v8 = Buffer.from('pretend V8 startup data');
  const v8Size = Buffer.alloc(4);
  v8Size.writeInt32LE(v8.length);
  return Buffer.concat([
    u32(0x143da19),
    Buffer.from([1]),
    str('20.20.2'),
    str('x64'),
    str('linux'),
    u32(123),
    u32(0),
    v8Size,
    v8,
    middle,
    u64(entries.length),
    ...entries.flatMap(([id, data]) => [str(id), u64(data.length), data]),
  ]);
}

describe('the snapshot blob’s built-in code cache', () => {
  const entries: Array<[string, Buffer]> = [
    ['fs', Buffer.alloc(40, 1)],
    ['http', Buffer.alloc(30, 2)],
    ['internal/tty', Buffer.alloc(20, 3)],
  ];

  it('is found after Node’s own data and read entry by entry', () => {
    const blob = blobOf(entries);
    const { entries: read } = readBuiltinCodeCache(blob);
    expect(read.map((e) => [e.id, e.bytes])).toEqual([
      ['fs', 40],
      ['http', 30],
      ['internal/tty', 20],
    ]);
  });

  it('keeps only the entries asked for, and every byte before them', () => {
    const blob = blobOf(entries);
    const { blob: trimmed, kept } = withBuiltinCodeCache(blob, (id) => id !== 'fs');
    expect(kept.map((e) => e.id)).toEqual(['http', 'internal/tty']);
    expect(trimmed.equals(blobOf(entries.filter(([id]) => id !== 'fs')))).toBe(true);
    expect(readBuiltinCodeCache(trimmed).entries.map((e) => e.id)).toEqual(['http', 'internal/tty']);
  });

  it('refuses what is not a snapshot blob, a truncated one, and one without the section at its end', () => {
    expect(() => readBuiltinCodeCache(Buffer.from('#!/bin/sh\necho hi\n'))).toThrow(/not a Node start-up snapshot blob/);
    expect(() => readBuiltinCodeCache(blobOf(entries).subarray(0, 60))).toThrow(/snapshot blob ends inside its V8 startup data/);
    expect(() => readBuiltinCodeCache(Buffer.concat([blobOf(entries), Buffer.from([0])]))).toThrow(/no built-in code cache section at its end/);
  });

  it('is what the build left in dist/bin/keel.blob: kept only for what a run may load that the snapshot lacks', () => {
    const { entries: read } = readBuiltinCodeCache(readFileSync(path.join(root, 'dist', 'bin', 'keel.blob')));
    const ids = new Set(read.map((e) => e.id));
    // fs, events and the CommonJS loader are evaluated in every snapshot; http is loaded by the first request, https
    // and tls by the first request to the real API, tty by a terminal; nothing Keel imports loads repl or the test runner
    // (http2 is the Bedrock provider's: the AWS SDK's handler imports it).
    for (const held of ['fs', 'events', 'internal/modules/cjs/loader']) expect(ids.has(held), held).toBe(false);
    for (const needed of ['http', '_http_client', 'https', 'tls', 'tty']) expect(ids.has(needed), needed).toBe(true);
    for (const unused of ['repl', 'internal/test_runner/runner', 'cluster']) expect(ids.has(unused), unused).toBe(false);
  });
});

describe('the build step that trims it', () => {
  it('leaves a blob it cannot read as Node wrote it, says why, and removes its scratch files', async () => {
    const { dropUnneededCodeCache } = await import('../../scripts/build-snapshot.mjs');
    const dir = mkdtempSync(path.join(tmpdir(), 'keel-trim-'));
    try {
      const file = path.join(dir, 'keel.blob.tmp');
      const list = path.join(dir, 'builtins.json');
      writeFileSync(file, 'not a blob');
      writeFileSync(list, '["fs"]');
      const errors: string[] = [];
      const write = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((chunk: string) => (errors.push(String(chunk)), true)) as typeof process.stderr.write;
      try {
        dropUnneededCodeCache(file, list, undefined, '0.1.0\n');
      } finally {
        process.stderr.write = write;
      }
      expect(readFileSync(file, 'utf8')).toBe('not a blob');
      expect(errors.join('')).toMatch(/^build: the start-up snapshot keeps all of Node's built-in code cache \(not a Node start-up snapshot blob/);
      expect(existsSync(list)).toBe(false);
      expect(existsSync(`${file}.trimmed`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
