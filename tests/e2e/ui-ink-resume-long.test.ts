/**
 * Resuming a long session in the Ink UI draws only the conversation's end, says how much it leaves out, and the
 * prompt answers at once; the model still gets every message.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectDir } from '../../plugins/session-store/paths.js';
import { say, startAnthropicServer, type ScriptedServer } from '../helpers/anthropic-server.js';
import { hasTmux, startKeelTerminal, type Terminal } from '../helpers/tmux.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace | undefined;
let term: Terminal | undefined;
let server: ScriptedServer | undefined;
afterEach(async () => {
  term?.kill();
  await server?.close();
  ws?.cleanup();
  term = ws = server = undefined;
});

/** A session file in the store's format: a header, then `exchanges` × (prompt, tool call, tool result, answer). */
function writeSession(home: string, project: string, id: string, exchanges: number): void {
  const dir = projectDir(home, project);
  mkdirSync(dir, { recursive: true });
  const lines: object[] = [{ type: 'header', version: 1, id, cwd: project, projectRoot: project, model: 'claude-test', createdAt: new Date().toISOString() }];
  const message = (m: unknown) => ({ type: 'message', at: Date.now(), message: m });
  for (let n = 0; n < exchanges; n++) {
    lines.push(
      message({ role: 'user', content: `request number ${n}` }),
      message({ role: 'assistant', content: [{ type: 'text', text: `looking ${n}` }, { type: 'tool_use', id: `toolu_${n}`, name: 'read_file', input: { path: `f${n}.ts` } }] }),
      message({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: `contents ${n}` }] }),
      message({ role: 'assistant', content: [{ type: 'text', text: `answer number ${n}` }] }),
    );
  }
  writeFileSync(path.join(dir, `${id}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

describe.skipIf(!hasTmux)('resuming a long session in the Ink UI', () => {
  it('draws the last rows under a line counting the earlier messages, and the model gets them all', async () => {
    ws = makeWorkspace({ git: true });
    writeSession(ws.home, ws.dir, 'long-one', 1000);
    server = await startAnthropicServer([say('the next answer')]);
    term = startKeelTerminal({ cwd: ws.dir, width: 120, args: ['--resume', 'long-one'], env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url } });
    await term.waitFor(/Resumed session long-one \(4000 messages\)/, { timeoutMs: 60_000 });
    // The end of the conversation drawn (it may come after that line).
    await term.waitFor('answer number 999', { history: true });
    const history = term.joinedHistory();
    const note = /… ([\d,]+) earlier messages not shown here \(the model still has the whole conversation\)/.exec(history);
    expect(note).not.toBeNull();
    // The end is drawn, the start is not; what is drawn follows the note.
    expect(history).toContain('answer number 999');
    expect(history).not.toMatch(/^> request number 0$/m);
    const hidden = Number(note![1]!.replace(/,/g, ''));
    expect(hidden).toBeGreaterThan(3000);
    expect(history).not.toContain(`answer number ${Math.floor(hidden / 4) - 1}\n`);
    expect(history.indexOf(note![0])).toBeLessThan(history.indexOf('answer number 999'));
    term.type('go on');
    term.keys('Enter');
    await term.waitFor(/the next answer/);
    expect(server.messageRequests()[0]!.body.messages).toHaveLength(4001);
  });
});
