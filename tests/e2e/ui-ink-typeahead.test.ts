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

describe.skipIf(!hasTmux)('keys typed ahead for the prompt never answer a question (Ink and plain UIs)', () => {
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

  it('--ui plain: "y" and Enter typed on from the prompt\'s words as the question appears do not answer it; the question is asked again, a later "y" answers, and the words come back at the prompt', async () => {
    const canary = path.join(fixture.tempDir('keel-canary-'), 'ran');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { term: t, server: s } = await fixture.start(
      [{ ...callTool('bash', { command: `touch ${canary}` }), beforeEvent: ({ index }) => (index === 0 ? held : undefined) }, say('all done')],
      { args: ['--ui', 'plain'], ready: /^> ?$/m },
    );
    t.type('run it');
    t.keys('Enter');
    await t.waitFor(/Working\.\.\./);
    const words = 'and then tidy up the tests please '.repeat(6);
    let typed = 0;
    // Typing on: the model's answer arrives after the third key; once the question shows, "y" and Enter follow.
    for (;;) {
      if (typed >= words.length) throw new Error(`the question never appeared; the screen:\n${t.screen()}`);
      t.type(words[typed++]);
      if (typed === 3) release();
      await pause(TYPING_GAP_MS);
      if (/Answer \[1-4[^\n]*$/.test(t.screen().trimEnd())) break;
    }
    t.type('y');
    await pause(TYPING_GAP_MS);
    t.keys('Enter');
    await t.waitFor(/keys typed before this question appeared are ignored[\s\S]*Answer \[1-4[^\n]*\s*$/);
    await pause(SETTLED_MS + 200);
    expect(existsSync(canary)).toBe(false);
    expect(s.requests).toHaveLength(1);

    t.type('y');
    t.keys('Enter');
    await t.waitFor(/^all done$/m);
    expect(existsSync(canary)).toBe(true);
    // The words typed before the question are the prompt's line again, without the "y" it refused.
    const screen = await t.waitFor(/\[claude-sonnet[^\n]*\n> a/);
    const prompt = (screen.split('\n').filter((l) => l.startsWith('> ')).at(-1) ?? '').slice(2).trimEnd();
    expect(prompt.length).toBeGreaterThan(0);
    expect(words.startsWith(prompt), prompt).toBe(true);
  });

  for (const ui of ['ink', 'plain'] as const) {
    it(`${ui}: "y" and Enter typed while keel starts do not trust the folder; the answer typed after a pause is taken`, async () => {
      const ws = fixture.workspace();
      ws.write('agent.config.ts', "export default { model: 'project-model' };\n");
      const server = await fixture.server([say('ok')]);
      const t = fixture.terminal({ ws, server, args: ui === 'plain' ? ['--ui', 'plain'] : [] });
      // Typed at once: keel is still starting, so the terminal holds the keys until the question reads them.
      t.type('y');
      t.keys('Enter');
      const question = ui === 'plain' ? /Trust this folder \(remembered\)\? \[y\/n\]/ : /Do you trust the files in this folder\?/;
      await t.waitFor(ui === 'plain' ? /keys typed before this question appeared are ignored/ : /Keys typed before this appeared are ignored/);
      await pause(SETTLED_MS + 200);
      expect(t.screen()).toMatch(question);
      expect(existsSync(path.join(ws.home, 'trusted-folders.json'))).toBe(false);
      t.type('n');
      if (ui === 'plain') t.keys('Enter');
      await t.waitFor(ui === 'plain' ? /^> ?$/m : /ask mode/);
      expect(existsSync(path.join(ws.home, 'trusted-folders.json'))).toBe(false);
      expect(t.screen()).not.toContain('project-model');
    });
  }
});
