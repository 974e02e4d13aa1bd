/** The corpus harness itself: a harmless run changes nothing, and an unasked write would be seen. */
import { describe, expect, it } from 'vitest';
import { callTool, resultText, say, useHostile } from '../../helpers/adversary.js';

const hostile = useHostile();

describe('adversarial harness', () => {
  it('a plain answer changes nothing and leaks nothing', async () => {
    const h = await hostile([say('hello')]);
    const run = await h.run(['-p', 'hi']);
    expect(run.code).toBe(0);
    expect(h.verdict()).toMatchObject({ changed: [], ran: false, leaked: [] });
  });

  it('auto mode: a write to ~/.bashrc is asked, so a headless run refuses it', async () => {
    const h = await hostile([callTool('write_file', { path: '~/.bashrc', content: 'touch /tmp/x' }, 'w1'), say('done')]);
    const run = await h.run(['-p', 'go', '--permission-mode', 'auto']);
    expect(run.code).toBe(0);
    const v = h.verdict();
    expect(v.changed).toEqual([]);
    expect(v.results.w1?.is_error).toBe(true);
    expect(resultText(v.results.w1)).toMatch(/shell profile/);
  });
});
