import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { runKeel } from '../helpers/cli.js';
import { makeWorkspace } from '../helpers/workspace.js';
import { encodeCache, flushCaches, loadBundle, userCacheFile } from '../../scripts/vendor-loader.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const prepare = useScriptedProjects();

/** The per-user code cache files of a KEEL_HOME. */
const cacheFiles = (home: string) => {
  const dir = path.join(home, 'code-cache');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.bin')).map((f) => path.join(dir, f)) : [];
};

describe('the V8 code cache of the CLI and vendor bundles', () => {
  it('uses the build’s cache with the build’s Node, writing nothing to $KEEL_HOME, with or without the snapshot', async () => {
    const { env, ws } = await prepare([say('one'), say('two')]);
    // Without the start-up snapshot every bundle loads through the cache (keel.cjs included).
    let run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, KEEL_NO_SNAPSHOT: '1' } });
    expect(run).toMatchObject({ code: 0, stdout: 'one\n', stderr: '' });
    expect(existsSync(path.join(ws.home, 'code-cache'))).toBe(false);
    // From the snapshot the CLI, zod and the SDK are already loaded: nothing is read from a cache or written.
    run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'two\n', stderr: '' });
    expect(existsSync(path.join(ws.home, 'code-cache'))).toBe(false);
  });

  it('is written 0600 in a 0700 $KEEL_HOME/code-cache where the build’s does not fit, and a corrupt, truncated or foreign cache is ignored', async () => {
    const prepared = await prepare([say('one'), say('two'), say('three'), say('four')]);
    const ws = prepared.ws;
    // V8 rejects a cache made under other flags: this run cannot use the build's.
    const env = { ...prepared.env, NODE_OPTIONS: '--stack-trace-limit=20' };
    let run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'one\n', stderr: '' });
    const files = cacheFiles(ws.home);
    expect(files.map((f) => path.basename(f).split('-')[0]).sort()).toEqual(['anthropic', 'core', 'keel']);
    expect(statSync(path.join(ws.home, 'code-cache')).mode & 0o777).toBe(0o700);
    for (const file of files) expect(statSync(file).mode & 0o777).toBe(0o600);

    // Garbage of the right length, a valid header over a flipped payload, a truncated file.
    const [first, second] = files.filter((f) => !path.basename(f).startsWith('keel-'));
    writeFileSync(first, Buffer.alloc(statSync(first).size, 0x41));
    const bytes = readFileSync(second);
    bytes[bytes.length - 100] ^= 0xff;
    writeFileSync(second, bytes);
    run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'two\n', stderr: '' });
    // Rejected caches are written anew.
    for (const file of files) expect(readFileSync(file).subarray(0, 8).toString()).toBe('KEELCC1\n');

    writeFileSync(first, readFileSync(first).subarray(0, 1000));
    run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'three\n', stderr: '' });

    // A cache others may write is not read (nor one in a folder others may write).
    chmodSync(first, 0o666);
    chmodSync(path.join(ws.home, 'code-cache'), 0o777);
    run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'four\n', stderr: '' });
  });
});

describe('loadBundle', () => {
  const bundle = (dir: string, source: string) => {
    writeFileSync(path.join(dir, 'demo.cjs'), source);
    return createHash('sha256').update(source).digest();
  };

  it('runs a CommonJS bundle with its own require, writing no cache when there is nowhere to write', () => {
    const ws = makeWorkspace();
    try {
      const hash = bundle(ws.dir, "module.exports = { sep: require('node:path').sep, file: __filename };");
      const out = loadBundle('demo', hash.toString('hex'), { dir: ws.dir });
      expect(out).toEqual({ sep: path.sep, file: path.join(ws.dir, 'demo.cjs') });
    } finally {
      ws.cleanup();
    }
  });

  it('ignores a planted cache: a symlink, a cache for other source, or bytes that are not a cache', () => {
    const ws = makeWorkspace();
    try {
      const hash = bundle(ws.dir, 'module.exports = { answer: 42 };');
      const cacheDir = path.join(ws.dir, 'cache');
      mkdirSync(cacheDir, { mode: 0o700 });
      const file = userCacheFile(cacheDir, 'demo', hash.toString('hex'));
      const target = path.join(ws.dir, 'elsewhere.bin');
      writeFileSync(target, encodeCache(Buffer.from('not V8 data at all'), hash), { mode: 0o600 });
      symlinkSync(target, file);
      expect(loadBundle('demo', hash.toString('hex'), { dir: ws.dir, userCacheDir: cacheDir })).toEqual({ answer: 42 });
      // Keel's header with a wrong source hash, then valid framing around bytes V8 rejects: both compile from source.
      writeFileSync(path.join(ws.dir, 'demo.cache'), encodeCache(Buffer.from('x'.repeat(64)), Buffer.alloc(32)));
      expect(loadBundle('demo', hash.toString('hex'), { dir: ws.dir })).toEqual({ answer: 42 });
      writeFileSync(path.join(ws.dir, 'demo.cache'), encodeCache(Buffer.from('x'.repeat(64)), hash));
      expect(loadBundle('demo', hash.toString('hex'), { dir: ws.dir })).toEqual({ answer: 42 });
      // A bundle that is not the one recorded runs without any cache.
      expect(loadBundle('demo', '0'.repeat(64), { dir: ws.dir, userCacheDir: cacheDir })).toEqual({ answer: 42 });
      // At exit the planted link is replaced by a cache of this user's own making (the link's target is untouched).
      flushCaches();
      expect(lstatSync(file).isFile()).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file).subarray(8, 40).equals(hash)).toBe(true);
      expect(readFileSync(target).subarray(72).toString()).toBe('not V8 data at all');
    } finally {
      ws.cleanup();
    }
  });

  it('ships the build’s cache beside each bundle it belongs to, readable by every user', () => {
    const vendor = path.join(root, 'dist', 'bin', 'vendor');
    const bundles = readdirSync(vendor).filter((f) => f.endsWith('.cjs')).map((f) => path.join(vendor, f));
    expect(bundles.map((f) => path.basename(f))).toEqual(expect.arrayContaining(['core.cjs', 'anthropic.cjs', 'mvdan-sh.cjs', 'mcp.cjs']));
    for (const bundle of [...bundles, path.join(root, 'dist', 'bin', 'keel.cjs')]) {
      const cacheFile = bundle.replace(/\.cjs$/, '.cache');
      const cache = readFileSync(cacheFile);
      expect(cache.subarray(0, 8).toString()).toBe('KEELCC1\n');
      expect(cache.subarray(8, 40).equals(createHash('sha256').update(readFileSync(bundle)).digest())).toBe(true);
      expect(statSync(cacheFile).mode & 0o777).toBe(0o644);
    }
  });
});
