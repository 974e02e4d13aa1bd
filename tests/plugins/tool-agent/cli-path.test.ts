import { describe, expect, it } from 'vitest';
import { launchFlags } from '../../../plugins/tool-agent/cli-path.js';

describe('a sub-agent starts the way its parent did', () => {
  it('passes on the start-up snapshot the parent started from, in either spelling', () => {
    expect(launchFlags(['--snapshot-blob', '/k/dist/bin/keel.blob'])).toEqual(['--snapshot-blob', '/k/dist/bin/keel.blob']);
    expect(launchFlags(['--max-old-space-size=100', '--snapshot-blob=/k/b.blob'])).toEqual(['--snapshot-blob=/k/b.blob']);
  });

  it('passes nothing else: no snapshot, no flags', () => {
    expect(launchFlags([])).toEqual([]);
    expect(launchFlags(['--expose-gc', '--import', 'x.mjs'])).toEqual([]);
  });
});
