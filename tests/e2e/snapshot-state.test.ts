/**
 * What the start-up snapshot must not carry from the process that built it into the runs that start from it: the
 * build machine's environment, and values that belong to one process (a nonce, a pid, a start time). The blob is
 * built here by the build's own script (scripts/build-snapshot.mjs) in a copy of this checkout's package, under an
 * environment full of canaries, and searched byte by byte; then real runs of the built binary are compared.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const prepare = useScriptedProjects();
const scratch: Workspace[] = [];
afterEach(() => {
  for (const ws of scratch.splice(0)) ws.cleanup();
});

/** This checkout's launcher and build, copied (node_modules linked), for a blob built apart from dist/. */
function copiedPackage(dir: string): string {
  const pkg = path.join(dir, 'pkg');
  mkdirSync(pkg);
  cpSync(path.join(root, 'bin'), path.join(pkg, 'bin'), { recursive: true });
  cpSync(path.join(root, 'dist'), path.join(pkg, 'dist'), { recursive: true, filter: (src) => !src.endsWith('.map') && !src.endsWith('keel.blob') });
  cpSync(path.join(root, 'package.json'), path.join(pkg, 'package.json'));
  symlinkSync(path.join(root, 'node_modules'), path.join(pkg, 'node_modules'));
  return pkg;
}

/** Where a string sits in the blob, in either of V8's encodings (one byte a character, or UTF-16). */
const holds = (blob: Buffer, text: string) => blob.includes(Buffer.from(text, 'latin1')) || blob.includes(Buffer.from(text, 'utf16le'));

describe('the start-up snapshot’s build', () => {
  it('keeps none of the build machine’s environment and no per-process nonce in the blob', () => {
    const ws = makeWorkspace();
    scratch.push(ws);
    const pkg = copiedPackage(ws.dir);
    const live = path.join(pkg, 'dist', 'bin');
    const canaries = {
      ANTHROPIC_API_KEY: 'sk-ant-canary-key-5f0d1c',
      ANTHROPIC_AUTH_TOKEN: 'canary-auth-token-5f0d1c',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/canary-base-5f0d1c',
      HTTPS_PROXY: 'http://canary-proxy-5f0d1c:3128',
      HOME: path.join(ws.dir, 'canary-home-5f0d1c'),
      KEEL_HOME: path.join(ws.dir, 'canary-keel-home-5f0d1c'),
      SHELL: '/bin/canary-shell-5f0d1c',
      USER: 'canary-user-5f0d1c',
      KEEL_MODEL: 'canary-model-5f0d1c',
      CANARY_SECRET: 'canary-secret-5f0d1c',
    };
    const script = `import { buildSnapshot } from ${JSON.stringify(pathToFileURL(path.join(root, 'scripts', 'build-snapshot.mjs')).href)};
buildSnapshot({ root: ${JSON.stringify(pkg)}, live: ${JSON.stringify(live)}, version: undefined });`;
    const build = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: pkg, encoding: 'utf8', env: { PATH: process.env.PATH, ...canaries } });
    expect(build.status, build.stderr).toBe(0);
    const blobFile = path.join(live, 'keel.blob');
    expect(existsSync(blobFile), build.stderr).toBe(true);
    const blob = readFileSync(blobFile);
    // The check works: the blob does hold what the warm-up wrote into it.
    expect(holds(blob, 'keel-snapshot-')).toBe(true);
    for (const [name, value] of Object.entries(canaries)) expect(holds(blob, value), `${name} is in the blob`).toBe(false);
    expect(blob.toString('latin1')).not.toMatch(/5f0d1c/);
    // The transport's placeholder for pre-built request parts is drawn per request, not once in the builder.
    expect(blob.toString('latin1')).not.toMatch(/keel-prebuilt-(messages|tools):[0-9a-f]{32}/);

    // That blob starts, and answers as the build's own does.
    const run = spawnSync(path.join(pkg, 'bin', 'keel.js'), ['doctor'], { encoding: 'utf8', cwd: ws.dir, env: { PATH: process.env.PATH, KEEL_HOME: ws.home, HOME: ws.home } });
    expect(run.stdout).toMatch(new RegExp(`start-up\\s+from the start-up snapshot ${blobFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });
});

describe('runs from the start-up snapshot', () => {
  it('each get their own process tag and session id (their own pid and random bytes), as a run without it does', async () => {
    const tags: string[] = [];
    const sessions: string[] = [];
    for (const snapshot of [true, true, false]) {
      const { ws, env, server } = await prepare([callTool('bash', { command: 'echo "tags=$KEEL_PROCESS_TAGS"' }), say('done')]);
      const run = await runKeel(['-p', 'tag', '--permission-mode', 'bypassPermissions', '--output-format', 'json'], { cwd: ws.dir, env: snapshot ? env : { ...env, KEEL_NO_SNAPSHOT: '1' } });
      expect(run.code, run.stderr).toBe(0);
      sessions.push(JSON.parse(run.stdout).session_id);
      const result = JSON.stringify(server.messageRequests().at(-1)?.body);
      const tag = /tags=(keel-\d+-[0-9a-f]{16})/.exec(result)?.[1];
      expect(tag, result).toBeDefined();
      tags.push(tag!);
    }
    expect(new Set(tags).size).toBe(3);
    expect(new Set(tags.map((tag) => tag.split('-')[1])).size).toBe(3);
    expect(new Set(sessions).size).toBe(3);
  });
});
