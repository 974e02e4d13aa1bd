/**
 * Resuming a compacted session: the history printed is the real one (the summary once, marked as such, not as a
 * prompt), the totals (cost, tokens) and the context estimate come back, and the session keeps its permission mode.
 */
import { describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux, send } from '../helpers/tmux.js';

const fixture = terminalFixture();

// A long line in it, so the resumed context is big enough to show as more than 0 %.
const summary = ['Completed tasks', 'Key findings', 'Current state', 'Pending work', 'Important decisions'].map((h) => `## ${h}\n- the summary says hi`).join('\n') + `\n- ${'finding '.repeat(2000)}`;

describe.skipIf(!hasTmux)('resuming a compacted session', () => {
  for (const ui of ['plain', 'ink'] as const) {
    it(`${ui}: prints the summary once, marked; restores cost, tokens and context; keeps the mode`, async () => {
      const ws = fixture.workspace();
      const server = await fixture.server([say('a first answer', { usage: { input_tokens: 20_000, output_tokens: 500 } }), say(summary), say('after resume')]);
      const ready = ui === 'plain' ? /^> ?$/m : /edits mode/;
      let term = fixture.terminal({ ws, server, width: 160, args: ['--ui', ui, '--permission-mode', 'edits'] });
      await term.waitFor(ready);
      send(term, 'the first prompt');
      await term.waitFor(/a first answer/);
      send(term, '/compact');
      await term.waitFor(/^Compacted the conversation: \d+ → \d+ tokens\.$/m);
      // One line for one event.
      expect(term.screen().match(/ompacted/g)).toHaveLength(1);
      // The cost the session ends with, compaction included: /status waits for the compaction to be done (the
      // status bar could still show the cost before it).
      send(term, '/status');
      const before = /^Cost: \$(\d+\.\d+)$/m.exec(await term.waitFor(/^Cost: \$\d+\.\d+$/m))![1];
      term.keys('C-d');
      await term.waitFor(/EXIT=0/);
      term.kill();
      term = fixture.terminal({ ws, server, width: 160, args: ['--ui', ui, '--continue'] });
      await term.waitFor(/Resumed session/);
      // The summary once, marked; the prompt it kept, as a prompt; none of the compaction's own words as prompts.
      // (Printed after that line: waited for.)
      await term.waitFor(ui === 'plain' ? /^\[summary\] The earlier conversation, compacted:$/m : /Summary of the earlier conversation \(compacted\)/, { history: true });
      const screen = await term.waitFor(/^> the first prompt$/m, { history: true });
      expect(screen.match(/the summary says hi/g)).toHaveLength(5);
      expect(screen).not.toContain('This session continues');
      expect(screen).not.toContain('verbatim');
      expect(screen).not.toContain('<summary>');
      // The mode kept, the cost restored, the context estimated from the resumed messages.
      send(term, '/status');
      const status = await term.waitFor(/^Cost: .*$/m);
      expect(status).toMatch(/^Permission mode: edits$/m);
      const context = /^Context: (\d+) \/ \d+ tokens \((\d+)%\)$/m.exec(status)!;
      expect(Number(context[1])).toBeGreaterThan(1000);
      expect(Number(context[2])).toBeGreaterThan(0);
      expect(status).toContain(`$${before}`);
      if (ui === 'ink') expect(await term.waitFor(/edits mode/)).toContain(`$${before}`);
    });
  }
});
