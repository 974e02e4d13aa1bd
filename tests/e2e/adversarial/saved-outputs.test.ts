/**
 * Issue 24, class 10: Keel saves long tool outputs under `$KEEL_HOME/tool-outputs/<session>` for the model to read
 * on. A session reads its own without asking, and no other session's or project's: those are asked about (the
 * file tools and bash alike), and inside the sandbox they are not there at all.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { savedOutputDir } from '../../../kernel/index.js';
import { callTool, callTools, resultText, say, useHostile, type Hostile } from '../../helpers/adversary.js';
import { skipReason, useAttack } from './sandbox-world.js';

const hostile = useHostile();
const attack = useAttack();
const SLOW = 90_000;
const ASKED = /needs the user's approval/;
const CANARY = 'CANARY-OTHER-PROJECT-LOG-6d2e';

/** Another project's session left a saved output behind in the same KEEL_HOME. */
function plantOther(h: Hostile): string {
  const file = path.join(h.keelHome, 'tool-outputs', 'other-session', 'call-1.txt');
  h.write(path.relative(h.dir, file), `deploy log\n${CANARY}\n`);
  return file;
}

function leaked(h: Hostile): boolean {
  return h.server.messageRequests().some((r) => JSON.stringify(r.body).includes(CANARY));
}

describe.each(['edits', 'auto'] as const)('class 10 without the sandbox, %s mode', (mode) => {
  it("the session reads its own saved output unasked; another session's is asked about and never sent", async () => {
    const h = await hostile();
    const other = plantOther(h);
    const session = randomUUID();
    const own = path.join(savedOutputDir(h.keelHome, session), 'b1.txt');
    h.server.push(
      callTool('bash', { command: 'seq 1 5000' }, 'b1'),
      callTools(
        { id: 'r_own', name: 'read_file', input: { path: own, offset: 4990, limit: 20 } },
        { id: 'r_other', name: 'read_file', input: { path: other } },
        { id: 'g_all', name: 'grep', input: { pattern: 'CANARY', path: path.join(h.keelHome, 'tool-outputs') } },
        { id: 'b_other', name: 'bash', input: { command: `cat ${other}` } },
        { id: 'b_glob', name: 'bash', input: { command: `cat ${path.join(h.keelHome, 'tool-outputs')}/*/*.txt` } },
      ),
      say('done'),
    );
    // edits mode asks before bash: the rule lets the command that makes the long output run.
    const run = await h.run(['-p', 'go', '--permission-mode', mode, '--session-id', session, '--allowedTools', 'bash(seq *)']);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(resultText(v.results.b1)).toContain(own);
    expect(v.results.r_own?.is_error, resultText(v.results.r_own)).toBeUndefined();
    expect(resultText(v.results.r_own)).toContain('5000');
    for (const id of ['r_other', 'g_all', 'b_other', 'b_glob']) {
      expect(v.results[id]?.is_error, `${id}: ${resultText(v.results[id])}`).toBe(true);
      expect(resultText(v.results[id]), id).toMatch(ASKED);
    }
    expect(leaked(h)).toBe(false);
    expect(v.leaked).toEqual([]);
  });
});

describe.skipIf(Boolean(skipReason))('class 10 inside the sandbox', { timeout: SLOW }, () => {
  it("only this session's saved outputs are visible in the sandbox", async () => {
    const a = await attack(
      [
        { id: 'b1', input: { command: 'seq 1 5000' } },
        { id: 'b2', input: { command: 'tail -n 1 "$KEEL_HOME"/tool-outputs/*/b1.txt; echo "--"; ls "$KEEL_HOME/tool-outputs"; echo "--"; cat "$KEEL_HOME/tool-outputs/other-session/call-1.txt"; grep -r CANARY "$KEEL_HOME" ; true' } },
      ],
      { setup: (h) => void plantOther(h) },
    );
    expect(a.text('b1')).toMatch(/saved at .*tool-outputs/);
    const [own, listing, rest] = a.text('b2').split('--');
    expect(own).toMatch(/\b5000\b/);
    expect(listing.trim().split('\n')).toHaveLength(1);
    expect(listing).not.toContain('other-session');
    expect(rest).toMatch(/No such file or directory/);
    expect(leaked(a.h)).toBe(false);
    expect(a.v.leaked).toEqual([]);
  });
});
