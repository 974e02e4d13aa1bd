/** grep on what is not a regular file: a FIFO, a device, a FIFO among the files of a folder, a link named on its own. */
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { harness, textOf, type Harness } from './harness.js';

const hasRg = (() => {
  try {
    execFileSync('which', ['rg']);
    return true;
  } catch {
    return false;
  }
})();

let h: Harness | undefined;
afterEach(() => h?.cleanup());

describe.each(hasRg ? (['js', 'rg'] as const) : (['js'] as const))('grep with the %s backend', (backend) => {
  it('refuses a FIFO or a device named as the path, naming the tool and the field, without waiting on it', async () => {
    h = await harness([toolsFs({ grep: backend })]);
    execFileSync('mkfifo', [h.ws.path('pipe')]);
    const fifo = await h.run('grep', { pattern: 'hit', path: 'pipe' });
    expect(fifo.isError).toBe(true);
    expect(textOf(fifo)).toBe('grep: path: pipe is not a folder or a regular file (a FIFO, socket or device); grep searches files.');
    const device = await h.run('grep', { pattern: 'hit', path: '/dev/zero' });
    expect(textOf(device)).toBe('grep: path: /dev/zero is not a folder or a regular file (a FIFO, socket or device); grep searches files.');
  });

  it('searches a folder holding a FIFO without opening it, and a file named through a link', async () => {
    h = await harness([toolsFs({ grep: backend })]);
    execFileSync('mkfifo', [h.ws.path('pipe')]);
    h.ws.write('a.txt', 'one hit\n');
    symlinkSync('a.txt', h.ws.path('link.txt'));
    expect(textOf(await h.run('grep', { pattern: 'hit', output_mode: 'content' }))).toBe('a.txt:1:one hit');
    expect(textOf(await h.run('grep', { pattern: 'hit', path: 'link.txt', output_mode: 'content' }))).toBe('link.txt:1:one hit');
  });
});
