// The start-up snapshot the `keel` executable starts from (bin/keel.js): dist/bin/keel.cjs evaluated by this Node,
// with the libraries common runs import (scripts/binary/snapshot.ts), written to dist/bin/keel.blob. `<blob>.node`
// names the Node binary that made it; the launcher uses the blob only with that one. Without a blob, `keel` runs
// keel.cjs as `node bin/keel.js` does.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KEEL_NODE_FLAGS, KEEL_SNAPSHOT_FLAGS } from './node-flags.mjs';
import { withBuiltinCodeCache } from './snapshot-code-cache.mjs';

/** The Node built-ins an esbuild metafile's outputs import (`node:http` and `http` alike). */
export function builtinImports(metafile) {
  const names = new Set();
  for (const output of Object.values(metafile.outputs)) {
    for (const { path: spec, external } of output.imports) {
      const name = spec.replace(/^node:/, '');
      if (external && builtinModules.includes(name)) names.add(name);
    }
  }
  return names;
}

/**
 * The only variables of the build's environment the snapshot builder sees. The snapshot keeps whatever the builder's
 * modules and its warm-up run read, and every run of this install restores it: given the build machine's whole
 * environment, an API key, a proxy, `$HOME` or `$SHELL` there could end up in the blob (the warm-up's system prompt
 * names the shell, and its request bytes stay in Node's buffer pool). The warm-up's run gets its own `$KEEL_HOME`,
 * `$HOME` and key from warm-up.ts; proxy settings are absent, so it takes the direct path as a run without them does.
 */
const BUILDER_ENV = ['PATH', 'TMPDIR', 'SystemRoot'];
function builderEnv(env) {
  return Object.fromEntries(BUILDER_ENV.filter((name) => env[name] !== undefined).map((name) => [name, env[name]]));
}

/**
 * Builds dist/bin/keel.blob in `live` (dist/bin); `version` is what `keel --version` prints, to check the blob, and
 * `runtimeBuiltins` the built-ins Keel's bundles import (their code cache is kept where the snapshot lacks them).
 */
export function buildSnapshot({ root, live, version, runtimeBuiltins }) {
  const blob = path.join(live, 'keel.blob');
  const builtins = `${blob}.builtins.json`;
  const snapshot = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, ...KEEL_SNAPSHOT_FLAGS, '--snapshot-blob', `${blob}.tmp`, '--build-snapshot', path.join(live, 'keel.cjs')], {
    cwd: root,
    encoding: 'utf8',
    env: { ...builderEnv(process.env), KEEL_NO_CODE_CACHE: '1', NODE_OPTIONS: '', KEEL_SNAPSHOT_BUILTINS: builtins },
  });
  if (snapshot.status !== 0 || !existsSync(`${blob}.tmp`)) {
    rmSync(`${blob}.tmp`, { force: true });
    rmSync(builtins, { force: true });
    process.stderr.write(`build: no start-up snapshot (keel starts without one, more slowly): exit ${snapshot.status}\n${snapshot.stderr}\n`);
    return;
  }
  dropUnneededCodeCache(`${blob}.tmp`, builtins, builtinsLoadedBy(runtimeBuiltins), version);
  renameSync(`${blob}.tmp`, blob);
  writeFileSync(`${blob}.node`, `${realpathSync(process.execPath)}\n`);
  // The V8 flags the blob and the code caches were made under, for launchers other than bin/keel.js (keel/sdk's
  // child process): `node` on both of its paths, `snapshot` added when it starts from the blob (node-flags.mjs).
  writeFileSync(`${blob}.flags.json`, `${JSON.stringify({ node: KEEL_NODE_FLAGS, snapshot: KEEL_SNAPSHOT_FLAGS })}\n`);
}

/**
 * Every built-in module, internal ones included, that Node loads for `names` and for its standard streams over a
 * file and a pipe: probed in a fresh `node`. Undefined if the probe fails (then no entry is dropped for it).
 */
function builtinsLoadedBy(names) {
  if (!names) return undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'keel-builtins-'));
  const out = path.join(dir, 'out');
  const probe = `const before = new Set(process.moduleLoadList);
for (const name of ${JSON.stringify([...names])}) { try { require(name); } catch {} }
void process.stdin; void process.stdout; void process.stderr;
require('fs').writeFileSync(${JSON.stringify(`${out}.json`)}, JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ') && !before.has(m)).map((m) => m.slice(13))));`;
  const stdout = openSync(out, 'w');
  try {
    const run = spawnSync(process.execPath, ['-e', probe], { stdio: ['ignore', stdout, 'pipe'], env: { PATH: process.env.PATH } });
    return run.status === 0 ? new Set(JSON.parse(readFileSync(`${out}.json`, 'utf8'))) : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(stdout);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Node's snapshot blob carries V8 code cache for every built-in (3 MB), which every start reads and copies (about
 * 1.7 ms a MB here). Kept: the entries of built-ins the snapshot does not hold evaluated and a run may load (`needed`,
 * all of them when it is unknown). The smaller blob is kept only if it starts and answers `--version`; otherwise
 * the blob stays as Node wrote it.
 */
export function dropUnneededCodeCache(file, builtinsFile, needed, version) {
  const trimmed = `${file}.trimmed`;
  try {
    const held = new Set(JSON.parse(readFileSync(builtinsFile, 'utf8')));
    const { blob } = withBuiltinCodeCache(readFileSync(file), (id) => !held.has(id) && (!needed || needed.has(id)));
    writeFileSync(trimmed, blob);
    const check = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, ...KEEL_SNAPSHOT_FLAGS, '--snapshot-blob', trimmed, path.join(path.dirname(file), '..', '..', 'bin', 'keel.js'), '--version'], {
      encoding: 'utf8',
      env: { ...process.env, KEEL_NO_FAST_PATH: '1', NODE_OPTIONS: '' },
    });
    if (check.status !== 0 || (version !== undefined && check.stdout !== version)) throw new Error(`the trimmed blob did not start (exit ${check.status}): ${check.stderr.trim()}`);
    renameSync(trimmed, file);
  } catch (err) {
    process.stderr.write(`build: the start-up snapshot keeps all of Node's built-in code cache (${err instanceof Error ? err.message : String(err)})\n`);
  } finally {
    rmSync(trimmed, { force: true });
    rmSync(builtinsFile, { force: true });
  }
}
