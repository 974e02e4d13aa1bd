/**
 * Where the permission mode comes from: --permission-mode, then KEEL_PERMISSION_MODE, then config, default ask; Claude
 * Code's names are accepted; a bad value stops the start with one line naming its source. Proved through the built
 * CLI with a scripted model whose write would land in the project.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { callTool, resultText, say, useHostile } from '../helpers/adversary.js';

const RUN = { timeout: 90_000 };
const hostile = useHostile();

async function writeAttempt(args: string[], env: Record<string, string> = {}) {
  const h = await hostile([() => callTool('write_file', { path: 'made.txt', content: 'x' }, 'w'), say('done')]);
  const run = await h.run(['-p', 'go', ...args], { env, timeoutMs: 60_000 });
  const result = h.verdict().results.w;
  return { run, made: existsSync(h.path('made.txt')), text: result ? resultText(result) : '', h };
}

describe('the permission mode and its sources', () => {
  it('KEEL_PERMISSION_MODE=plan refuses a write; the flag wins over it', RUN, async () => {
    const planned = await writeAttempt([], { KEEL_PERMISSION_MODE: 'plan' });
    expect(planned.run.code).toBe(0);
    expect(planned.made).toBe(false);
    expect(planned.text).toMatch(/plan mode runs only read-level tools/);
    const flagged = await writeAttempt(['--permission-mode', 'acceptEdits'], { KEEL_PERMISSION_MODE: 'plan' });
    expect(flagged.made, flagged.text).toBe(true);
  });

  it('the default is ask: a headless write is refused as needing approval', RUN, async () => {
    const asked = await writeAttempt([]);
    expect(asked.made).toBe(false);
    expect(asked.text).toMatch(/approval/);
  });

  it('a bad mode stops the start with one line naming where it came from', RUN, async () => {
    const env = await writeAttempt([], { KEEL_PERMISSION_MODE: 'yolo' });
    expect(env.run.code).not.toBe(0);
    expect(env.run.stderr.trim()).toBe('keel: KEEL_PERMISSION_MODE: must be one of auto, edits, ask, manual, plan, default, acceptEdits, bypassPermissions');
    const flag = await writeAttempt(['--permission-mode', 'yolo']);
    expect(flag.run.stderr.trim()).toBe('keel: --permission-mode: must be one of auto, edits, ask, manual, plan, default, acceptEdits, bypassPermissions');
    expect(env.made || flag.made).toBe(false);
  });
});
