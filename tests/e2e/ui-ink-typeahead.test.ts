/**
 * Keys typed for the prompt never answer a permission question (plugins/ui-ink/app/typeahead.ts): the built keel in a
 * real terminal, a model that asks for a bash call while the user types `y`s into the prompt, through the dialog's
 * appearance. The command must not run until a `y` typed after a pause.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, say } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';
import { SETTLED_MS } from '../../plugins/ui-ink/app/typeahead.js';

const fixture = terminalFixture();
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A fast typist's gap between keys. */
const TYPING_GAP_MS = 100;

describe.skipIf(!hasTmux)('the Ink UI with keys typed ahead', () => {
  it('a permission dialog that appears while `y`s are typed into the prompt does not run the command, keeps waiting, and takes a `y` after a pause; the draft is kept', async () => {
    // The canary is outside the workspace: the command creates it only if it runs.
    const canary = path.join(fixture.tempDir('keel-canary-'), 'ran');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { term: t, server: s } = await fixture.start([
      // The model's answer is held until the test is typing, so the dialog appears in the middle of it.
      { ...callTool('bash', { command: `touch ${canary}` }), beforeEvent: ({ index }) => (index === 0 ? held : undefined) },
      say('all done'),
    ]);
    t.type('run it');
    t.keys('Enter');
    await t.waitFor(/esc to interrupt/);
    t.type('draft ');
    await t.waitFor(/› draft/);

    let typed = 0;
    let typedBeforeSeen = -1;
    let after = 0;
    // Typing on: the model's answer arrives after the third `y`; five more `y`s follow once the dialog is on the screen.
    while (after < 5) {
      t.type('y');
      typed++;
      if (typed === 3) release();
      if (typedBeforeSeen >= 0) after++;
      else if (t.screen().includes('bash wants permission')) typedBeforeSeen = typed;
      if (typed > 200) throw new Error(`the dialog never appeared; the screen:\n${t.screen()}`);
      await pause(TYPING_GAP_MS);
    }
    await t.waitFor(/Keys typed before this appeared are ignored/);
    // A reader's pause: the typed `y`s had all the time they need to act, had they been taken.
    await pause(SETTLED_MS + 200);
    expect(existsSync(canary)).toBe(false);
    expect(s.requests).toHaveLength(1);
    const waiting = t.screen();
    expect(waiting).toContain('bash wants permission');
    expect(waiting).toContain(`touch ${canary}`);

    t.type('y');
    await t.waitFor(/all done/);
    expect(existsSync(canary)).toBe(true);
    // The prompt is back with its draft: "draft " and the `y`s typed before the dialog, none of those it dropped.
    const draft = /› draft (y*)\s*$/m.exec(t.screen());
    expect(draft, t.screen()).not.toBeNull();
    expect(draft![1].length).toBeLessThanOrEqual(typedBeforeSeen);
  });
});
