/**
 * keel/sdk's child process starts the way bin/keel.js's shell lines would start it: from the build's start-up
 * snapshot when this Node made it, with the V8 flags it was made under, and without it otherwise.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { launchArgs } from '../../sdk/transports.js';
import { KEEL_NODE_FLAGS, KEEL_SNAPSHOT_FLAGS } from '../../scripts/node-flags.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A package laid out as the build leaves it: bin/keel.js and dist/bin/keel.blob with its two notes (`flags` null: none). */
function fakePackage(maker = realpathSync(process.execPath), flags: unknown = { node: ['--max-semi-space-size=8'], snapshot: ['--no-rehash-snapshot'] }): { bin: string; blob: string } {
  const pkg = mkdtempSync(path.join(tmpdir(), 'keel-launch-'));
  dirs.push(pkg);
  mkdirSync(path.join(pkg, 'bin'));
  mkdirSync(path.join(pkg, 'dist', 'bin'), { recursive: true });
  const bin = path.join(pkg, 'bin', 'keel.js');
  const blob = path.join(pkg, 'dist', 'bin', 'keel.blob');
  writeFileSync(bin, '');
  writeFileSync(blob, 'blob');
  writeFileSync(`${blob}.node`, `${maker}\n`);
  if (flags !== null) writeFileSync(`${blob}.flags.json`, JSON.stringify(flags));
  return { bin, blob };
}

describe('launchArgs', () => {
  it('starts from the snapshot with its flags when this Node made it', () => {
    const { bin, blob } = fakePackage();
    expect(launchArgs(bin, {})).toEqual(['--max-semi-space-size=8', '--no-rehash-snapshot', '--snapshot-blob', blob, bin]);
  });

  it('starts without it, with the flags, under NODE_OPTIONS or KEEL_NO_SNAPSHOT, for another Node, or a Node newer than the blob', () => {
    const { bin, blob } = fakePackage();
    expect(launchArgs(bin, { NODE_OPTIONS: '--no-warnings' })).toEqual(['--max-semi-space-size=8', bin]);
    expect(launchArgs(bin, { KEEL_NO_SNAPSHOT: '1' })).toEqual(['--max-semi-space-size=8', bin]);
    expect(launchArgs(fakePackage('/opt/other/node').bin, {})).toEqual(['--max-semi-space-size=8', expect.stringMatching(/keel\.js$/)]);
    utimesSync(blob, new Date(1_000_000), new Date(1_000_000));
    expect(launchArgs(bin, {})).toEqual(['--max-semi-space-size=8', bin]);
  });

  it('runs the script alone when the build left no flags, or flags that are not flags', () => {
    expect(launchArgs(fakePackage(undefined, null).bin, {})).toEqual([expect.stringMatching(/keel\.js$/)]);
    expect(launchArgs(fakePackage(undefined, { node: ['--ok', 'rm -rf /'], snapshot: [] }).bin, {})).toEqual([expect.stringMatching(/keel\.js$/)]);
    expect(launchArgs(fakePackage(undefined, { node: ['--ok'], snapshot: ['; rm -rf /'] }).bin, {})).toEqual([expect.stringMatching(/keel\.js$/)]);
    // The notes of an older build (a bare list) or a broken file.
    expect(launchArgs(fakePackage(undefined, ['--max-semi-space-size=8']).bin, {})).toEqual([expect.stringMatching(/keel\.js$/)]);
    expect(launchArgs(fakePackage(undefined, 'null').bin, {})).toEqual([expect.stringMatching(/keel\.js$/)]);
    expect(launchArgs(path.join(tmpdir(), 'no-such-package', 'bin', 'keel.js'), {})).toEqual([path.join(tmpdir(), 'no-such-package', 'bin', 'keel.js')]);
  });

  it('finds this build’s snapshot and the flags the launcher uses', () => {
    const bin = path.join(root, 'bin', 'keel.js');
    expect(launchArgs(bin, {})).toEqual([...KEEL_NODE_FLAGS, ...KEEL_SNAPSHOT_FLAGS, '--snapshot-blob', path.join(root, 'dist', 'bin', 'keel.blob'), bin]);
  });
});
