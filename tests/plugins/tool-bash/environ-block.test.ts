/**
 * hideFromEnvironBlock on a real process: a child `node` started with a known environment block clears names from
 * it, then a `cat /proc/$PPID/environ` it spawns shows what any same-user process now reads. The in-process cases
 * run on a fake memory (no write to the test's own process) for the faults that cannot be provoked for real.
 */
import { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { environBounds, hideFromEnvironBlock, type EnvironBlockAccess, type EnvironHideResult } from '../../../plugins/tool-bash/environ-block.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const linux = process.platform === 'linux';
let dir: string;
let probe: string;

/** The child: hides the names it is given (optionally with /proc/self/mem refused), then reports what a grandchild reads. */
const PROBE = `
const { spawnSync } = require('node:child_process');
const { hideFromEnvironBlock } = require(process.argv[2]);
const names = JSON.parse(process.argv[3]);
const refuse = process.argv[4] === 'refuse';
const before = Object.fromEntries(names.map((n) => [n, process.env[n]]));
const result = hideFromEnvironBlock(names, refuse ? { openMemory: () => { throw Object.assign(new Error('EACCES: permission denied, open /proc/self/mem'), { code: 'EACCES' }); } } : {});
const seen = spawnSync('/bin/sh', ['-c', 'cat /proc/$PPID/environ'], { env: { PATH: '/usr/bin:/bin' } });
const after = Object.fromEntries(names.map((n) => [n, process.env[n]]));
// The environment a child gets from process.env (what Keel's own spawns build on).
const inherited = spawnSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(process.env))'], { env: process.env }).stdout.toString();
process.stdout.write(JSON.stringify({ result, block: seen.stdout.toString('base64'), status: seen.status, before, after, inherited: JSON.parse(inherited) }));
`;

interface ProbeOutput {
  result: EnvironHideResult;
  block: string;
  status: number;
  before: Record<string, string | undefined>;
  after: Record<string, string | undefined>;
  inherited: Record<string, string>;
}

/**
 * Starts the probe with exactly these entries as its environment block, repeated names included (a plain `env`
 * object cannot repeat a name; ChildProcess#spawn takes the entries as they are passed to execve).
 */
function runProbe(entries: string[], names: string[], refuse = false): Promise<ProbeOutput> {
  return new Promise((resolve, reject) => {
    const child = new ChildProcess();
    const spawnRaw = (child as unknown as { spawn: (options: Record<string, unknown>) => void }).spawn;
    spawnRaw.call(child, { file: process.execPath, args: [process.execPath, probe, path.join(dir, 'environ-block.cjs'), JSON.stringify(names), refuse ? 'refuse' : ''], envPairs: entries, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as ProbeOutput) : reject(new Error(`probe exited ${code}: ${err}`))));
  });
}

/** The block as execve lays it out, with the entries at the given indexes overwritten by zero bytes. */
function blockOf(entries: string[], cleared: number[] = []): Buffer {
  return Buffer.concat(entries.map((e, i) => Buffer.concat([cleared.includes(i) ? Buffer.alloc(Buffer.byteLength(e)) : Buffer.from(e), Buffer.alloc(1)])));
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'keel-environ-'));
  buildSync({ entryPoints: [path.join(root, 'plugins/tool-bash/environ-block.ts')], outfile: path.join(dir, 'environ-block.cjs'), bundle: true, platform: 'node', format: 'cjs', logLevel: 'warning' });
  probe = path.join(dir, 'probe.cjs');
  writeFileSync(probe, PROBE);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'CANARY-ENVIRON-7f3a91';

describe.runIf(linux)('hideFromEnvironBlock on a real process', () => {
  it('clears the secret from /proc/$PPID/environ, leaves every other byte, and process.env still returns it', async () => {
    const entries = ['HOME=/home/someone', `API_KEY=sk-${SECRET}`, 'LANG=C.UTF-8', 'ÜBER=grüße=two=equals'];
    const out = await runProbe(entries, ['API_KEY']);
    expect(out.result).toEqual({ hidden: ['API_KEY'] });
    expect(out.status).toBe(0);
    const seen = Buffer.from(out.block, 'base64');
    expect(seen.toString('latin1')).not.toContain(SECRET);
    expect(seen.equals(blockOf(entries, [1]))).toBe(true);
    expect(out.after.API_KEY).toBe(`sk-${SECRET}`);
    // A child spawned from process.env after the clearing still gets the variable and the others unchanged.
    expect(out.inherited).toMatchObject({ API_KEY: `sk-${SECRET}`, HOME: '/home/someone', LANG: 'C.UTF-8', ÜBER: 'grüße=two=equals' });
  });

  it('clears every occurrence of a repeated name; process.env keeps the value it returned before', async () => {
    const entries = [`TOKEN=first-${SECRET}`, 'KEEP=1', `TOKEN=second-${SECRET}`];
    const out = await runProbe(entries, ['TOKEN']);
    expect(out.result).toEqual({ hidden: ['TOKEN'] });
    expect(Buffer.from(out.block, 'base64').equals(blockOf(entries, [0, 2]))).toBe(true);
    expect(out.after.TOKEN).toBe(out.before.TOKEN);
    expect(out.after.TOKEN).toContain(SECRET);
    // One entry is left in the environment (glibc's unsetenv dropped both, setenv added one).
    expect(out.inherited.TOKEN).toBe(out.before.TOKEN);
  });

  it('clears an empty value, and a name that is not there changes nothing', async () => {
    const entries = ['EMPTY=', 'A=1', 'EMPTY_NOT=x'];
    const out = await runProbe(entries, ['EMPTY', 'ABSENT']);
    expect(out.result).toEqual({ hidden: ['EMPTY'] });
    expect(Buffer.from(out.block, 'base64').equals(blockOf(entries, [0]))).toBe(true);
    expect(out.after.EMPTY).toBe('');
    expect(out.after.ABSENT).toBeUndefined();
    expect(out.inherited.EMPTY).toBe('');
    expect(out.inherited.EMPTY_NOT).toBe('x');

    const none = await runProbe(entries, ['ABSENT']);
    expect(none.result).toEqual({ hidden: [] });
    expect(Buffer.from(none.block, 'base64').equals(blockOf(entries))).toBe(true);
  });

  it('in a real worker thread it does nothing (and so never touches this test process)', async () => {
    const { Worker } = await import('node:worker_threads');
    const code = `const { parentPort } = require('node:worker_threads'); parentPort.postMessage(require(${JSON.stringify(path.join(dir, 'environ-block.cjs'))}).hideFromEnvironBlock(['PATH']));`;
    const worker = new Worker(code, { eval: true });
    const result = await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
    await worker.terminate();
    expect(result).toEqual({ hidden: [], reason: "a worker thread cannot re-set the process's environment" });
  });

  it('when /proc/self/mem cannot be opened it changes nothing and says why', async () => {
    const entries = [`API_KEY=${SECRET}`, 'B=2'];
    const out = await runProbe(entries, ['API_KEY'], true);
    expect(out.result.hidden).toEqual([]);
    expect(out.result.reason).toMatch(/cannot open \/proc\/self\/mem for writing: EACCES/);
    expect(Buffer.from(out.block, 'base64').equals(blockOf(entries))).toBe(true);
    expect(out.after.API_KEY).toBe(SECRET);
  });
});

/** A process's memory as a buffer, with its environment block at env_start; reads and writes go to the buffer. */
function fakeProcess(entries: string[], overrides: Partial<EnvironBlockAccess> = {}) {
  const start = 4096;
  const block = blockOf(entries);
  const memory = Buffer.alloc(start + block.length + 64, 0xaa);
  block.copy(memory, start);
  const env: NodeJS.ProcessEnv = Object.fromEntries(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  const writes: number[] = [];
  const access: Partial<EnvironBlockAccess> = {
    platform: 'linux',
    mainThread: true,
    env,
    readStat: () => `42 (node (x) y) S ${Array.from({ length: 46 }, (_, i) => i + 4).join(' ')} ${start} ${start + block.length} 0`,
    readBlock: () => Buffer.from(memory.subarray(start, start + block.length)),
    openMemory: () => 7,
    read: (_fd, into, position) => memory.copy(into, 0, position, position + into.length),
    write: (_fd, from, position) => (writes.push(position), from.copy(memory, position)),
    close: () => undefined,
    ...overrides,
  };
  return { access, memory, env, start, block: () => memory.subarray(start, start + block.length) };
}

describe('hideFromEnvironBlock: faults', () => {
  it('reads env_start and env_end after a comm holding spaces and parentheses', () => {
    const fake = fakeProcess(['A=1']);
    expect(environBounds(fake.access.readStat!())).toEqual({ start: 4096, end: 4100 });
    expect(environBounds('42 (node) S 1 2 3')).toBeUndefined();
    expect(environBounds('garbage')).toBeUndefined();
  });

  it('writes only the entry asked for, at its place in memory', () => {
    const fake = fakeProcess(['A=1', `S=${SECRET}`, 'B=2']);
    expect(hideFromEnvironBlock(['S'], fake.access)).toEqual({ hidden: ['S'] });
    expect(fake.block().equals(blockOf(['A=1', `S=${SECRET}`, 'B=2'], [1]))).toBe(true);
    // Nothing outside the block was written.
    expect(fake.memory.subarray(0, fake.start).every((b) => b === 0xaa)).toBe(true);
    expect(fake.env.S).toBe(SECRET);
  });

  it('on another platform it does nothing and says so', () => {
    const fake = fakeProcess([`S=${SECRET}`], { platform: 'darwin', readStat: () => { throw new Error('must not read'); } });
    expect(hideFromEnvironBlock(['S'], fake.access)).toEqual({ hidden: [], reason: 'darwin has no /proc/self/environ to clear' });
  });

  it('in a worker thread it does nothing (its process.env is a copy)', () => {
    const fake = fakeProcess([`S=${SECRET}`], { mainThread: false, openMemory: () => { throw new Error('must not open'); } });
    expect(hideFromEnvironBlock(['S'], fake.access)).toEqual({ hidden: [], reason: "a worker thread cannot re-set the process's environment" });
    expect(fake.block().equals(blockOf([`S=${SECRET}`]))).toBe(true);
  });

  it('without the stat fields, or with a block of another size, it writes nothing', () => {
    const noFields = fakeProcess([`S=${SECRET}`], { readStat: () => '42 (node) S 1 2 3', openMemory: () => { throw new Error('must not open'); } });
    expect(hideFromEnvironBlock(['S'], noFields.access)).toEqual({ hidden: [], reason: '/proc/self/stat has no env_start/env_end fields' });
    const shorter = fakeProcess([`S=${SECRET}`, 'A=1']);
    shorter.access.readBlock = () => blockOf([`S=${SECRET}`]);
    expect(hideFromEnvironBlock(['S'], shorter.access).reason).toMatch(/holds 24 bytes, not the 28/);
    expect(shorter.block().equals(blockOf([`S=${SECRET}`, 'A=1']))).toBe(true);
  });

  it('when /proc/self cannot be read it says why and never throws', () => {
    const fake = fakeProcess([`S=${SECRET}`], { readBlock: () => { throw new Error('ENOENT: no such file'); } });
    expect(hideFromEnvironBlock(['S'], fake.access)).toEqual({ hidden: [], reason: 'cannot read /proc/self: ENOENT: no such file' });
  });

  it('leaves an entry whose bytes in memory are not what /proc/self/environ showed', () => {
    const fake = fakeProcess([`S=${SECRET}`, `T=${SECRET}`]);
    // Memory now differs at S's place (as if the block had moved or changed since it was read).
    const read = fake.access.read!;
    fake.access.read = (fd, into, position) => {
      const n = read(fd, into, position);
      if (position === fake.start) into[0] = 0x58;
      return n;
    };
    const result = hideFromEnvironBlock(['S', 'T'], fake.access);
    expect(result).toEqual({ hidden: ['T'], reason: 'not cleared: S (the block changed under it)' });
    expect(fake.block().equals(blockOf([`S=${SECRET}`, `T=${SECRET}`], [1]))).toBe(true);
  });

  it('reports a failed or short write and still closes the file', () => {
    let closed = 0;
    const fake = fakeProcess([`S=${SECRET}`, `T=${SECRET}`], {
      write: (_fd, from, position) => {
        if (position === 4096) throw new Error('EIO: i/o error');
        return from.length - 1;
      },
      close: () => void closed++,
    });
    expect(hideFromEnvironBlock(['S', 'T'], fake.access)).toEqual({ hidden: [], reason: 'not cleared: S (EIO: i/o error), T (a short write)' });
    expect(closed).toBe(1);
  });

  it('takes a predicate for the names', () => {
    const fake = fakeProcess(['INPUT_KEY=a', 'PATH=/bin', 'INPUT_TOKEN=b']);
    expect(hideFromEnvironBlock((name) => name.startsWith('INPUT_'), fake.access)).toEqual({ hidden: ['INPUT_KEY', 'INPUT_TOKEN'] });
    expect(fake.block().equals(blockOf(['INPUT_KEY=a', 'PATH=/bin', 'INPUT_TOKEN=b'], [0, 2]))).toBe(true);
  });
});
