/**
 * The `keel` executable starts Node from the build's start-up snapshot (dist/bin/keel.blob): Keel and its libraries
 * already evaluated, warmed by a scripted run at build time. What a snapshot could carry over from the build must
 * not reach a run (random ids, the folder, the environment), and wherever the snapshot cannot be used Keel starts
 * without it and works the same.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { callTool, say } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';
import { makeWorkspace } from '../helpers/workspace.js';
import { KEEL_NODE_FLAGS, KEEL_SNAPSHOT_FLAGS } from '../../scripts/node-flags.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const prepare = useScriptedProjects();

const startUpLine = (stdout: string) => stdout.split('\n').find((line) => /\bstart-up\b/.test(line)) ?? '';

/** This checkout's launcher and build, copied elsewhere (node_modules linked), as an install would place them. */
function copiedPackage(dir: string): string {
  const pkg = path.join(dir, 'pkg');
  mkdirSync(pkg);
  cpSync(path.join(root, 'bin'), path.join(pkg, 'bin'), { recursive: true });
  cpSync(path.join(root, 'dist'), path.join(pkg, 'dist'), { recursive: true, filter: (src) => !src.endsWith('.map') });
  cpSync(path.join(root, 'package.json'), path.join(pkg, 'package.json'));
  symlinkSync(path.join(root, 'node_modules'), path.join(pkg, 'node_modules'));
  return pkg;
}

describe('the start-up snapshot', () => {
  it('is what the keel executable starts from', async () => {
    const { ws, env } = await prepare([]);
    const run = await runKeel(['doctor'], { cwd: ws.dir, env });
    expect(startUpLine(run.stdout)).toMatch(new RegExp(`^ok\\s+start-up\\s+from the start-up snapshot ${path.join(root, 'dist', 'bin', 'keel.blob')}$`));
  });

  it('gives every run its own session id, folder and environment, not the build’s', async () => {
    const { ws, env } = await prepare([say('one'), say('two'), say('three')]);
    const ids = new Set<string>();
    for (const prompt of ['one', 'two', 'three']) {
      const run = await runKeel(['-p', prompt, '--output-format', 'json'], { cwd: ws.dir, env });
      expect(run.code, run.stderr).toBe(0);
      ids.add(JSON.parse(run.stdout).session_id);
    }
    expect(ids.size).toBe(3);
    const sessions = await runKeel(['sessions', '--json'], { cwd: ws.dir, env });
    expect((JSON.parse(sessions.stdout) as Array<{ id: string }>).map((s) => s.id).sort()).toEqual([...ids].sort());
    const doctor = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env, ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/only-this-run' } });
    expect(doctor.stdout).toContain('requests go to http://127.0.0.1:9/only-this-run');
    expect(doctor.stdout).toContain('no API key');
    expect(doctor.stdout).toContain(`${ws.dir} is`);
  });

  it('runs from a package moved after its build, and through a symlink as npm links bin entries', async () => {
    const { ws, env } = await prepare([say('moved')]);
    const scratch = makeWorkspace();
    try {
      const pkg = copiedPackage(scratch.dir);
      const link = path.join(scratch.dir, 'keel');
      symlinkSync(path.join(pkg, 'bin', 'keel.js'), link);
      const doctor = await runKeel(['doctor'], { cwd: ws.dir, env, bin: link });
      expect(startUpLine(doctor.stdout)).toContain(`from the start-up snapshot ${path.join(pkg, 'dist', 'bin', 'keel.blob')}`);
      const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env, bin: link });
      expect(run.stdout).toBe('moved\n');
    } finally {
      scratch.cleanup();
    }
  });

  it('names a cold part missing from the install and how to mend it, failing only the feature that needs it', async () => {
    const { ws, env } = await prepare([say('still works')]);
    const scratch = makeWorkspace();
    try {
      const pkg = copiedPackage(scratch.dir);
      const missing = path.join(pkg, 'dist', 'bin', 'cold', 'inspect.cjs');
      rmSync(missing);
      const bin = path.join(pkg, 'bin', 'keel.js');
      const doctor = await runKeel(['doctor'], { cwd: ws.dir, env, bin });
      expect(doctor.code).not.toBe(0);
      expect(doctor.stderr.trim()).toBe(`keel: ${missing} cannot be read (ENOENT): this Keel install is incomplete; reinstall it or run npm run build in it`);
      const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env, bin });
      expect(run.stdout).toBe('still works\n');
    } finally {
      scratch.cleanup();
    }
  });

  it('is used however the launcher and Node are reached: through `..`, a relative path, Node linked on PATH', async () => {
    const { ws, env } = await prepare([]);
    const scratch = makeWorkspace();
    try {
      const linked = path.join(scratch.dir, 'linked-node');
      mkdirSync(linked);
      symlinkSync(process.execPath, path.join(linked, 'node'));
      const blob = `from the start-up snapshot ${path.join(root, 'dist', 'bin', 'keel.blob')}`;
      const cases: Array<[string, string, Record<string, string>]> = [
        ['a path with ..', path.join(root, 'bin', '..', 'bin', 'keel.js'), {}],
        ['a relative path', path.relative(ws.dir, path.join(root, 'bin', 'keel.js')), {}],
        ['node through a symlink on PATH', path.join(root, 'bin', 'keel.js'), { PATH: `${linked}${path.delimiter}${process.env.PATH}` }],
      ];
      for (const [how, bin, extra] of cases) {
        const doctor = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env, ...extra }, bin: bin.includes(path.sep) ? bin : `./${bin}` });
        expect(startUpLine(doctor.stdout), how).toContain(blob);
      }
    } finally {
      scratch.cleanup();
    }
  });

  it('holds no process listener from the build’s warm-up runs (their sessions are closed, their locks released)', () => {
    const scratch = makeWorkspace();
    try {
      const probe = path.join(scratch.dir, 'listeners.cjs');
      writeFileSync(probe, "process.stderr.write(JSON.stringify(['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'uncaughtException', 'unhandledRejection'].map((e) => process.listenerCount(e))));");
      const run = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, ...KEEL_SNAPSHOT_FLAGS, '-r', probe, '--snapshot-blob', path.join(root, 'dist', 'bin', 'keel.blob'), path.join(root, 'bin', 'keel.js'), '--version'], { encoding: 'utf8', env: { PATH: process.env.PATH, KEEL_NO_FAST_PATH: '1' } });
      expect(run.status, run.stderr).toBe(0);
      expect(JSON.parse(run.stderr)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    } finally {
      scratch.cleanup();
    }
  });

  it('keeps the process alive for a long timer, as Node does without it (no expiry of the build’s timers is left)', () => {
    const scratch = makeWorkspace();
    try {
      // A ref'd 60 s interval and nothing else: the process must still run when the test stops it.
      const probe = path.join(scratch.dir, 'interval.cjs');
      writeFileSync(probe, 'setInterval(() => undefined, 60_000);');
      const run = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, ...KEEL_SNAPSHOT_FLAGS, '-r', probe, '--snapshot-blob', path.join(root, 'dist', 'bin', 'keel.blob'), path.join(root, 'bin', 'keel.js'), '--version'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, KEEL_NO_FAST_PATH: '1' },
        timeout: 2000,
      });
      expect(run.stdout).toBe(`${JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version}\n`);
      expect(run.signal, `exited with ${run.status} instead`).toBe('SIGTERM');
    } finally {
      scratch.cleanup();
    }
  });

  it('names the way to start it when Node is given the snapshot without the launcher', () => {
    const run = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, ...KEEL_SNAPSHOT_FLAGS, '--snapshot-blob', path.join(root, 'dist', 'bin', 'keel.blob')], { encoding: 'utf8', env: { PATH: process.env.PATH } });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe("keel: start Keel with bin/keel.js (the snapshot needs the launcher's path as its first argument)\n");
  });

  it('starts without it, and works the same, when it cannot be used', async () => {
    const { ws, env } = await prepare([say('a'), say('b'), say('c'), say('d'), say('e')]);
    const scratch = makeWorkspace();
    try {
      const pkg = copiedPackage(scratch.dir);
      const bin = path.join(pkg, 'bin', 'keel.js');
      const blob = path.join(pkg, 'dist', 'bin', 'keel.blob');
      const without = async (extra: Record<string, string>, why: string, answer: string) => {
        const doctor = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env, ...extra }, bin });
        expect(startUpLine(doctor.stdout)).toMatch(/^warn\s+start-up\s+without the start-up snapshot/);
        expect(startUpLine(doctor.stdout)).toContain(why);
        const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, ...extra }, bin });
        expect(run.stdout, run.stderr).toBe(`${answer}\n`);
      };
      await without({ KEEL_NO_SNAPSHOT: '1' }, 'KEEL_NO_SNAPSHOT is set', 'a');
      await without({ NODE_OPTIONS: '--no-warnings' }, 'NODE_OPTIONS is set', 'b');
      // Made by another Node (V8 would refuse it and Node would exit): the launcher does not try it.
      writeFileSync(`${blob}.node`, '/opt/some/other/node\n');
      await without({}, 'the snapshot was made by /opt/some/other/node', 'c');
      // The Node that made it, since upgraded in place (newer than the blob).
      writeFileSync(`${blob}.node`, readFileSync(path.join(root, 'dist', 'bin', 'keel.blob.node')));
      utimesSync(blob, new Date(1_000_000), new Date(1_000_000));
      await without({}, 'is newer than the snapshot (upgraded since): run `npm run build`', 'd');
      // No snapshot at all (a build that could not make one).
      rmSync(blob);
      await without({}, 'there is no dist/bin/keel.blob', 'e');
    } finally {
      scratch.cleanup();
    }
  });
});

describe('the launcher', () => {
  it('starts Node with the V8 flags the build made the snapshot and code caches under, on both its paths', () => {
    const exec = readFileSync(path.join(root, 'bin', 'keel.js'), 'utf8').split('\n').filter((line) => /\bexec "?\$?\w*"? ?/.test(line) && line.includes('exec'));
    const nodeLines = exec.filter((line) => /exec (node|"\$keel_n")/.test(line));
    expect(nodeLines).toHaveLength(2);
    for (const line of nodeLines) for (const flag of KEEL_NODE_FLAGS) expect(line).toContain(`${flag} `);
    // The snapshot's own flags on its line only: without the blob, --no-rehash-snapshot would fix Node's own seed.
    const [fromBlob, plain] = [nodeLines.find((line) => line.includes('--snapshot-blob')), nodeLines.find((line) => !line.includes('--snapshot-blob'))];
    for (const flag of KEEL_SNAPSHOT_FLAGS) {
      expect(fromBlob).toContain(`${flag} --snapshot-blob`);
      expect(plain).not.toContain(flag);
    }
  });

  it('answers --version and --help from the build’s text, as the CLI itself would', async () => {
    const { ws, env } = await prepare([]);
    for (const flag of ['--version', '-v', '--help', '-h']) {
      const fast = await runKeel([flag], { cwd: ws.dir, env });
      const full = await runKeel([flag], { cwd: ws.dir, env: { ...env, KEEL_NO_FAST_PATH: '1' } });
      expect(fast.code).toBe(0);
      expect(fast.stdout, flag).toBe(full.stdout);
    }
    expect((await runKeel(['--version'], { cwd: ws.dir, env })).stdout).toBe(`${JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version}\n`);
  });

  it('passes the environment to Keel and its commands unchanged, whatever the shell lines use', async () => {
    const { ws, env, server } = await prepare([callTool('bash', { command: 'printenv f s d m n l p PATH_MARK' }), say('done')]);
    const run = await runKeel(['-p', 'env', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, f: 'F', s: 'S', d: 'D', m: 'M', n: 'N', l: 'L', p: 'P', PATH_MARK: 'kept' } });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.stringify(server.messageRequests()[1].body)).toContain('F\\nS\\nD\\nM\\nN\\nL\\nP\\nkept');
  });
});

describe('the bundled libraries', () => {
  it('are ASCII where the snapshot holds them: one other character makes V8 keep the whole source at two bytes a character', () => {
    for (const file of ['keel.cjs', 'vendor/core.cjs', 'vendor/anthropic.cjs', 'vendor/diff.cjs']) {
      const text = readFileSync(path.join(root, 'dist', 'bin', file), 'utf8');
      const at = text.search(/[^\x00-\x7f]/);
      expect(at, `${file}: ${JSON.stringify(text.slice(Math.max(0, at - 40), at + 10))}`).toBe(-1);
    }
  });

  it('hold the Anthropic SDK client with the messages and models APIs only', () => {
    const sdk = readFileSync(path.join(root, 'dist', 'bin', 'vendor', 'anthropic.cjs'), 'utf8');
    expect(sdk).toContain('/v1/messages');
    expect(sdk).toContain('/v1/models');
    // The rest of the SDK's API (files, skills, the beta and organization APIs) stays out of the binary.
    for (const path_ of ['/v1/files', '/v1/skills', '/v1/organizations', '/v1/deployments']) expect(sdk).not.toContain(path_);
  });

  it('hold zod with English messages only (its other locales are never used by Keel)', async () => {
    const { createRequire } = await import('node:module');
    const table = createRequire(import.meta.url)(path.join(root, 'dist', 'bin', 'vendor', 'core.cjs')) as { zod: typeof import('zod') };
    const { z } = table.zod;
    expect(Object.keys(z.locales).filter((k) => k !== 'default')).toEqual(['en']);
    expect(z.object({ a: z.string() }).safeParse({ a: 1 }).error?.issues[0].message).toBe('Invalid input: expected string, received number');
  });
});
