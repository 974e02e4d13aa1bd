// The start-up snapshot the `keel` executable starts from (bin/keel.js): dist/bin/keel.cjs evaluated by this Node,
// with the libraries common runs import (scripts/binary/snapshot.ts), written to dist/bin/keel.blob. `<blob>.node`
// names the Node binary that made it; the launcher uses the blob only with that one. Without a blob, `keel` runs
// keel.cjs as `node bin/keel.js` does.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KEEL_NODE_FLAGS } from './node-flags.mjs';
import { withBuiltinCodeCache } from './snapshot-code-cache.mjs';

/** Builds dist/bin/keel.blob in `live` (dist/bin); `version` is what `keel --version` prints, to check the blob. */
export function buildSnapshot({ root, live, version }) {
  const blob = path.join(live, 'keel.blob');
  const builtins = `${blob}.builtins.json`;
  const snapshot = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, '--snapshot-blob', `${blob}.tmp`, '--build-snapshot', path.join(live, 'keel.cjs')], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, KEEL_NO_CODE_CACHE: '1', NODE_OPTIONS: '', KEEL_SNAPSHOT_BUILTINS: builtins },
  });
  if (snapshot.status !== 0 || !existsSync(`${blob}.tmp`)) {
    rmSync(`${blob}.tmp`, { force: true });
    rmSync(builtins, { force: true });
    process.stderr.write(`build: no start-up snapshot (keel starts without one, more slowly): exit ${snapshot.status}\n${snapshot.stderr}\n`);
    return;
  }
  dropHeldBuiltinsCodeCache(`${blob}.tmp`, builtins, version);
  renameSync(`${blob}.tmp`, blob);
  writeFileSync(`${blob}.node`, `${realpathSync(process.execPath)}\n`);
}

/**
 * Drops the code cache of the built-ins the snapshot holds evaluated (scripts/snapshot-code-cache.mjs): about 2 of
 * the blob's 3 MB of built-in code cache, which every start would read and copy. The smaller blob is kept only if
 * it starts and answers `--version`; otherwise the blob stays as Node wrote it.
 */
export function dropHeldBuiltinsCodeCache(file, builtinsFile, version) {
  const trimmed = `${file}.trimmed`;
  try {
    const held = new Set(JSON.parse(readFileSync(builtinsFile, 'utf8')));
    const { blob } = withBuiltinCodeCache(readFileSync(file), (id) => !held.has(id));
    writeFileSync(trimmed, blob);
    const check = spawnSync(process.execPath, [...KEEL_NODE_FLAGS, '--snapshot-blob', trimmed, path.join(path.dirname(file), '..', '..', 'bin', 'keel.js'), '--version'], {
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
