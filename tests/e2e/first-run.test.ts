/**
 * The README's first commands in a clone: `npm install`, then `npx keel …`. npm's exec finds `keel` in the
 * clone's own package.json `bin`, links the folder into its npx cache and runs the folder's `prepare` for that
 * link; scripts/prepare.mjs must not rebuild a folder that is already built (the old first `npx keel` spent
 * 20–40 s on a second build). A copy of this checkout (package.json, bin/, scripts/, dist/, node_modules linked)
 * stands for the clone after its `npm install`; its scripts/build.mjs is replaced by one that records that it ran
 * and fails, and its dist/fast-path/version carries a tag only this copy has. npm runs offline with an empty cache
 * of its own, so nothing can come from a registry or another copy.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { say, startAnthropicServer, type ScriptedServer } from '../helpers/anthropic-server.js';
import { cleanEnv, collect } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/pack.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
let clone: string;
let server: ScriptedServer;
const tag = `0.0.0-first-run-${process.pid}`;

function npmEnv(extra: Record<string, string> = {}) {
  return cleanEnv({
    HOME: ws.home,
    KEEL_HOME: ws.home,
    npm_config_cache: ws.path('npm-cache'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...extra,
  });
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child, 120_000);
}

beforeAll(async () => {
  ws = makeWorkspace();
  clone = ws.path('keel');
  mkdirSync(clone);
  for (const entry of ['package.json', 'package-lock.json', 'bin', 'scripts', 'dist']) cpSync(path.join(REPO_ROOT, entry), path.join(clone, entry), { recursive: true });
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(clone, 'node_modules'));
  writeFileSync(path.join(clone, 'scripts', 'build.mjs'), "import { writeFileSync } from 'node:fs';\nwriteFileSync(new URL('../build-ran', import.meta.url), 'yes');\nprocess.exit(1);\n");
  writeFileSync(path.join(clone, 'dist', 'fast-path', 'version'), `${tag}\n`);
  server = await startAnthropicServer([say('Hello from the first run.')]);
});
afterAll(async () => {
  await server?.close();
  ws?.cleanup();
});

describe('npx keel in a clone after npm install', () => {
  it('runs the clone’s own bin through a link in the npx cache, without building it again', async () => {
    const version = await run('npx', ['keel', '--version'], npmEnv());
    expect(version.stderr).toBe('');
    expect(version.stdout).toBe(`${tag}\n`);
    expect(version.code).toBe(0);
    expect(existsSync(path.join(clone, 'build-ran'))).toBe(false);

    // npm's own resolution: one npx cache entry whose `keel` is a link to the clone, not a copy of it.
    const entries = readdirSync(ws.path('npm-cache/_npx'));
    expect(entries).toHaveLength(1);
    const installed = ws.path(`npm-cache/_npx/${entries[0]}/node_modules/keel`);
    expect(lstatSync(installed).isSymbolicLink()).toBe(true);
    expect(realpathSync(installed)).toBe(realpathSync(clone));

    const answer = await run('npx', ['keel', '-p', 'hi'], npmEnv({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key' }));
    expect(answer.stderr).toBe('');
    expect(answer.stdout).toBe('Hello from the first run.\n');
    expect(answer.code).toBe(0);
    expect(existsSync(path.join(clone, 'build-ran'))).toBe(false);
  });

  it('still builds for npm install, and for a link when the folder has no build', async () => {
    const prepare = (npmCommand: string) => run(process.execPath, [path.join(clone, 'scripts', 'prepare.mjs')], cleanEnv({ npm_command: npmCommand }));

    for (const npmCommand of ['install', 'ci', 'pack', 'publish']) {
      rmSync(path.join(clone, 'build-ran'), { force: true });
      expect((await prepare(npmCommand)).code).toBe(1);
      expect(existsSync(path.join(clone, 'build-ran')), npmCommand).toBe(true);
    }

    rmSync(path.join(clone, 'build-ran'), { force: true });
    const skipped = await prepare('link');
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toContain('not rebuilding');
    expect(existsSync(path.join(clone, 'build-ran'))).toBe(false);

    rmSync(path.join(clone, 'dist', 'bin', 'keel.cjs'));
    expect((await prepare('exec')).code).toBe(1);
    expect(existsSync(path.join(clone, 'build-ran'))).toBe(true);
  });
});
