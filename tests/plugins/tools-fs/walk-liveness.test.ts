/**
 * glob and the JavaScript grep read folders and files synchronously, a batch at a time: between batches they yield
 * to the event loop, so a UI stays live during a long search and an interrupt stops it midway.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { harness, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(() => h?.cleanup());

async function bigTree(): Promise<Harness> {
  h = await harness([toolsFs({ grep: 'js' })], { git: true });
  for (let i = 0; i < 1500; i++) {
    const dir = path.join(h.ws.dir, `d${i % 30}`);
    if (i < 30) mkdirSync(dir);
    writeFileSync(path.join(dir, `f${i}.txt`), i === 1499 ? 'needle\n' : 'hay\n');
  }
  return h;
}

/** Counts event-loop turns (setImmediate callbacks) while `work` runs; `onTick` may act on the count. */
async function ticksDuring(work: Promise<unknown>, onTick?: (n: number) => void): Promise<{ ticks: number; outcome: PromiseSettledResult<unknown> }> {
  let ticks = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    ticks++;
    onTick?.(ticks);
    setImmediate(tick);
  };
  setImmediate(tick);
  const [outcome] = await Promise.allSettled([work]);
  done = true;
  return { ticks, outcome };
}

describe.each([
  ['glob', { pattern: '**/*.txt' }],
  ['grep', { pattern: 'needle', output_mode: 'files_with_matches' }],
])('%s over 1 500 files', (tool, input) => {
  it('lets the event loop run while it searches, and finds what it should', async () => {
    const run = await bigTree();
    const { ticks, outcome } = await ticksDuring(run.run(tool, input));
    expect(outcome.status).toBe('fulfilled');
    expect(JSON.stringify((outcome as PromiseFulfilledResult<unknown>).value)).toContain('f1499.txt');
    expect(ticks).toBeGreaterThan(5);
  });

  it('stops midway when the call is aborted', async () => {
    const run = await bigTree();
    const controller = new AbortController();
    const { outcome } = await ticksDuring(run.run(tool, input, { signal: controller.signal }), (n) => {
      if (n === 3) controller.abort(new Error('interrupted'));
    });
    expect(outcome.status).toBe('rejected');
    expect(String((outcome as PromiseRejectedResult).reason)).toContain('interrupted');
  });
});
