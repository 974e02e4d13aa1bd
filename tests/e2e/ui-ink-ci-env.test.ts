/**
 * Keel started on a terminal where `CI` is set (a container or a dotfile exported it): Ink would draw nothing until
 * exit in its "CI" mode. The UI still draws as the user types and the answer streams, and commands still see the
 * variables.
 */
import { describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';

const fixture = terminalFixture();

describe.skipIf(!hasTmux)('the Ink UI with CI=true in the environment', () => {
  it('draws the prompt, the typed line and the answer while keel runs, and !commands see CI and CONTINUOUS_INTEGRATION', async () => {
    // `ready` is the Ink footer: in Ink's CI mode nothing at all would be on the screen before exit.
    const { term, server } = await fixture.start([say('answered on screen')], { env: { CI: 'true', CONTINUOUS_INTEGRATION: '1' } });
    term.type('draft shown as typed');
    await term.waitFor(/[>›] draft shown as typed/);
    term.keys('C-u');
    term.type('!echo seen-ci-$CI-$CONTINUOUS_INTEGRATION');
    term.keys('Enter');
    await term.waitFor(/seen-ci-true-1/);
    term.type('hello');
    term.keys('Enter');
    await term.waitFor(/answered on screen/);
    expect(server.requests).toHaveLength(1);
    // Still running: the answer was drawn before exit, and the prompt is back.
    expect(term.screen()).not.toContain('EXIT=');
    term.keys('C-d');
    await term.waitFor(/EXIT=0/);
  });
});
