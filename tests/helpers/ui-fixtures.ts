/** Fixtures shared by the UI end-to-end tests: sessions made in process, and streams of many small deltas. */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runAgent } from '../../kernel/index.js';
import queryAnthropic from '../../plugins/query-anthropic/index.js';
import sessionStore, { type SessionStoreService } from '../../plugins/session-store/index.js';
import { projectDir } from '../../plugins/session-store/paths.js';
import { say, startAnthropicServer, type BeforeEvent, type ScriptedTurn } from './anthropic-server.js';
import { testKernel, testSession } from './kernel.js';
import type { Workspace } from './workspace.js';

/** Records a session of `exchanges` prompt/answer pairs (2 messages each) in the workspace; returns its id. */
export async function recordSession(ws: Workspace, exchanges: number, firstPrompt = 'question 1'): Promise<string> {
  const server = await startAnthropicServer(Array.from({ length: exchanges }, (_, i) => say(`answer ${i + 1}: a line of text that the earlier session said`)));
  try {
    const root = realpathSync(ws.dir);
    const kernel = testKernel([queryAnthropic(), sessionStore({ fsync: false })], { baseURL: server.url, keelHome: ws.home, cwd: root, projectRoot: root });
    const session = await testSession(kernel);
    for (let i = 0; i < exchanges; i++) await runAgent(kernel, session, i === 0 ? firstPrompt : `question ${i + 1}`);
    (kernel.services.get('session-store') as SessionStoreService).close(session);
    return session.id;
  } finally {
    await server.close();
  }
}

/**
 * An answer streamed as `tokens` separate text deltas (`word ` each), `gapMs` apart, ending with `last`: the
 * scripted server's own deltas are few, so these are written before its first one.
 */
export function streamedAnswer(tokens: number, last: string, gapMs = 5): ScriptedTurn {
  let sent = false;
  return say(` ${last}`, {
    async beforeEvent(ctx: BeforeEvent) {
      if (sent || ctx.event !== 'content_block_delta') return;
      sent = true;
      for (let i = 0; i < tokens; i++) {
        const delta = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: i % 12 === 11 ? `w${i}\n` : `w${i} ` } };
        await ctx.write(`event: content_block_delta\ndata: ${JSON.stringify(delta)}\n\n`);
        await new Promise((r) => setTimeout(r, gapMs));
      }
    },
  });
}

/** A session file in the store's format: a header, then `exchanges` × (prompt, tool call, tool result, answer). */
export function writeSession(home: string, project: string, id: string, exchanges: number): void {
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
