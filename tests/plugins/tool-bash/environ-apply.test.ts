/**
 * tool-bash clears the scrubbed credentials from Keel's environment block at apply when scrubbing is on, and does
 * nothing at all (no /proc read) when it is off. The clearing itself is environ-block.test.ts's; here it is a spy,
 * so the test process's own block is never written.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const hide = vi.hoisted(() => vi.fn((_names: unknown) => ({ hidden: [] as string[], reason: undefined as string | undefined })));
vi.mock('../../../plugins/tool-bash/environ-block.js', () => ({ hideFromEnvironBlock: hide }));

import toolBash from '../../../plugins/tool-bash/index.js';
import { harness, type Harness } from '../tools-fs/harness.js';

const saved = { KEEL_SUBPROCESS_ENV_SCRUB: process.env.KEEL_SUBPROCESS_ENV_SCRUB, CLAUDE_CODE_SUBPROCESS_ENV_SCRUB: process.env.CLAUDE_CODE_SUBPROCESS_ENV_SCRUB };
let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
  hide.mockClear();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

function scrubbing(variable: string | undefined) {
  delete process.env.KEEL_SUBPROCESS_ENV_SCRUB;
  delete process.env.CLAUDE_CODE_SUBPROCESS_ENV_SCRUB;
  if (variable) process.env[variable] = '1';
}

const logs = (x: Harness) => x.events.filter((e) => e.type === 'log').map((e) => (e as { level: string; message: string }).level + ' ' + (e as { message: string }).message);

describe('tool-bash and its environment block', () => {
  for (const variable of ['KEEL_SUBPROCESS_ENV_SCRUB', 'CLAUDE_CODE_SUBPROCESS_ENV_SCRUB']) {
    it(`${variable}=1: clears exactly the scrubbed names, at apply`, async () => {
      scrubbing(variable);
      h = await harness([toolBash()]);
      expect(hide).toHaveBeenCalledTimes(1);
      const wanted = hide.mock.calls[0]![0] as (name: string) => boolean;
      for (const name of ['ANTHROPIC_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'OTEL_EXPORTER_OTLP_HEADERS', 'KEEL_REDIS_URL']) expect(wanted(name)).toBe(true);
      for (const name of ['PATH', 'HOME', 'KEEL_SUBPROCESS_ENV_SCRUB', 'ANTHROPIC_BASE_URL']) expect(wanted(name)).toBe(false);
    });
  }

  it('without scrubbing it never touches the block', async () => {
    scrubbing(undefined);
    h = await harness([toolBash()]);
    expect(hide).not.toHaveBeenCalled();
  });

  it('says so when the block could not be cleared', async () => {
    scrubbing('KEEL_SUBPROCESS_ENV_SCRUB');
    hide.mockReturnValueOnce({ hidden: [], reason: 'cannot open /proc/self/mem for writing: EACCES' });
    h = await harness([toolBash()]);
    expect(logs(h)).toContainEqual(expect.stringMatching(/^(warn|debug) credentials stay readable in \/proc\/\d+\/environ: cannot open \/proc\/self\/mem for writing: EACCES$/));
  });
});
