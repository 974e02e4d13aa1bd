/** Summaries cached under $KEEL_HOME are private: files 0600, folders 0700. */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SummaryCache } from '../../../plugins/compact-api-micro/cache.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

it('creates its folders 0700 and its files 0600', async () => {
  ws = makeWorkspace();
  const dir = path.join(ws.home, 'cache', 'compact-api-micro');
  await new SummaryCache(dir).set('k1', 'a summary with a token', 'bash');
  expect((statSync(path.join(ws.home, 'cache')).mode & 0o777).toString(8)).toBe('700');
  expect((statSync(dir).mode & 0o777).toString(8)).toBe('700');
  const files = readdirSync(dir);
  expect(files).toEqual(['k1.json']);
  for (const name of files) expect([name, (statSync(path.join(dir, name)).mode & 0o777).toString(8)]).toEqual([name, '600']);
});
