/**
 * The services both UIs consume instead of their own copies: tool-bash's `userShell` (the user's `!command`,
 * under the permission policy) and session-store's `promptHistory` (the project's prompt history file).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Answer, Decision, Plugin } from '../../../kernel/index.js';
import toolBash from '../../../plugins/tool-bash/index.js';
import sessionStore from '../../../plugins/session-store/index.js';
import { historyFile } from '../../../plugins/session-store/prompt-history.js';
import { harness, textOf, type Harness } from '../tools-fs/harness.js';

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

/** A permission policy that answers every call with `decision`. */
const policy = (decision: Decision | undefined): Plugin => ({
  name: 'test-policy',
  kernel: '^1.0.0',
  apply: (k) => k.hooks.prePermission.tapPromise('test-policy', async () => decision),
});

describe('userShell (tool-bash)', () => {
  it("runs the user's command through the bash tool when the policy allows it, and marks the result shown", async () => {
    h = await harness([policy({ behavior: 'allow' }), toolBash()]);
    const result = await h.kernel.services.get('userShell')!.run(h.session, 'echo from-the-user', async () => ({ kind: 'permission', choice: 'deny' }), new AbortController().signal);
    expect(textOf(result)).toContain('from-the-user');
    expect(result.display?.shown).toBe(true);
    expect(h.events.some((e) => e.type === 'tool_start')).toBe(true);
  });

  it('asks the user on an ask, and a denial runs nothing', async () => {
    h = await harness([policy({ behavior: 'ask', reason: 'needs a yes' }), toolBash()]);
    const canary = h.ws.path('ran');
    const asked: string[] = [];
    const ask = async (question: { kind: string; reason?: string }): Promise<Answer> => {
      asked.push(`${question.kind}: ${question.reason}`);
      return { kind: 'permission', choice: 'deny' };
    };
    const result = await h.kernel.services.get('userShell')!.run(h.session, `touch ${canary}`, ask, new AbortController().signal);
    expect(asked).toEqual(['permission: needs a yes']);
    expect(result).toMatchObject({ isError: true, content: 'Permission denied by the user', display: { denied: true } });
    expect(() => readFileSync(canary)).toThrow();
  });

  it('fails closed without a permission policy', async () => {
    h = await harness([policy(undefined), toolBash()]);
    const result = await h.kernel.services.get('userShell')!.run(h.session, 'echo no', async () => ({ kind: 'permission', choice: 'allow_once' }), new AbortController().signal);
    expect(result).toMatchObject({ isError: true, content: 'no permission policy allowed bash' });
  });
});

describe('promptHistory (session-store)', () => {
  it("keeps the project's prompts in one file that a second open reads back, skipping a repeat", async () => {
    h = await harness([sessionStore()]);
    const history = h.kernel.services.get('promptHistory')!.open();
    history.add('first');
    history.add('two\nlines');
    history.add('two\nlines');
    expect(h.kernel.services.get('promptHistory')!.open().entries).toEqual(['first', 'two\nlines']);
    expect(history.search('fir')).toEqual({ index: 0, entry: 'first' });
    expect(readFileSync(historyFile(h.ws.home, h.ws.dir), 'utf8')).toBe('"first"\n"two\\nlines"\n');
  });
});
