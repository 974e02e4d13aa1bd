import { describe, expect, it } from 'vitest';
import { launchFlags } from '../../../plugins/tool-agent/cli-path.js';

describe('a sub-agent starts the way its parent did', () => {
  it('passes on the start-up snapshot and the V8 flags it was made under, in either spelling', () => {
    expect(launchFlags(['--max-semi-space-size=8', '--snapshot-blob', '/k/dist/bin/keel.blob'])).toEqual(['--max-semi-space-size=8', '--snapshot-blob', '/k/dist/bin/keel.blob']);
    expect(launchFlags(['--snapshot-blob=/k/b.blob'])).toEqual(['--snapshot-blob=/k/b.blob']);
    expect(launchFlags(['--max-semi-space-size=8'])).toEqual(['--max-semi-space-size=8']);
  });

  it('keeps the hash seed flag with the snapshot it was made for, and never without one', () => {
    expect(launchFlags(['--max-semi-space-size=8', '--no-rehash-snapshot', '--snapshot-blob', '/k/b.blob'])).toEqual(['--max-semi-space-size=8', '--no-rehash-snapshot', '--snapshot-blob', '/k/b.blob']);
    expect(launchFlags(['--max-semi-space-size=8', '--no-rehash-snapshot'])).toEqual(['--max-semi-space-size=8']);
  });

  it('passes nothing else: no inspector, no profiler, no preload', () => {
    expect(launchFlags([])).toEqual([]);
    expect(launchFlags(['--expose-gc', '--import', 'x.mjs', '--inspect=9229', '--cpu-prof'])).toEqual([]);
  });
});
