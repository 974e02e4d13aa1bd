/**
 * The services both UIs consume instead of their own copies: tool-bash's `userShell` (the user's `!command`,
 * run without asking and added to the conversation) and session-store's `promptHistory` (the project's prompt history file).
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
  it("runs the user's command without asking, even where the policy would ask or deny, and marks the result shown", async () => {
    for (const decision of [{ behavior: 'ask', reason: 'needs a yes' }, { behavior: 'deny', reason: 'no' }, undefined] as const) {
      h = await harness([policy(decision), toolBash()]);
      const canary = h.ws.path('ran');
      const asked: string[] = [];
      const ask = async (): Promise<Answer> => {
        asked.push('asked');
        return { kind: 'permission', choice: 'deny' };
      };
      const result = await h.kernel.services.get('userShell')!.run(h.session, `touch ${canary} && echo from-the-user`, ask, new AbortController().signal);
      expect(asked).toEqual([]);
      expect(textOf(result)).toContain('from-the-user');
      expect(result.display?.shown).toBe(true);
      expect(readFileSync(canary, 'utf8')).toBe('');
      expect(h.events.some((e) => e.type === 'tool_start')).toBe(true);
      h.cleanup();
    }
    h = undefined;
  });

  it('adds the command and its output to the conversation as one user message, a failing command with its output and exit code', async () => {
    h = await harness([policy(undefined), toolBash()]);
    const shell = h.kernel.services.get('userShell')!;
    await shell.run(h.session, 'echo shell-out', async () => ({ kind: 'permission', choice: 'deny' }), new AbortController().signal);
    expect(h.session.messages.at(-1)).toMatchObject({
      role: 'user',
      content: [
        { type: 'text', text: '<bash-input>echo shell-out</bash-input>' },
        { type: 'text', text: expect.stringMatching(/^<bash-stdout>shell-out[\s\S]*<\/bash-stdout>$/) },
      ],
    });
    expect(h.events.some((e) => e.type === 'user_message')).toBe(true);
    await shell.run(h.session, 'echo broke >&2; exit 3', async () => ({ kind: 'permission', choice: 'deny' }), new AbortController().signal);
    expect(h.session.messages).toHaveLength(2);
    expect(JSON.stringify(h.session.messages.at(-1))).toMatch(/<bash-stdout>broke[\s\S]*\b3\b[\s\S]*<\/bash-stdout>/);
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
