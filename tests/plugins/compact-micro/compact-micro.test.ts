import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../kernel/index.js';
import compactMicro from '../../../plugins/compact-micro/index.js';
import { cutOutput } from '../../../plugins/compact-micro/truncate.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { bigTool, toolsPlugin } from '../compact-auto/harness.js';

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n');

describe('cutOutput', () => {
  it('leaves an output under both thresholds alone', () => {
    expect(cutOutput(numbered(100), { maxLines: 2000, maxChars: 100_000, headLines: 10, tailLines: 10 })).toBeNull();
  });

  it('cuts a long output to head and tail and names the omitted lines exactly', () => {
    const text = numbered(5000);
    const cut = cutOutput(text, { maxLines: 2000, maxChars: 1_000_000, headLines: 100, tailLines: 50 })!;
    expect(cut.head.split('\n').filter(Boolean)).toHaveLength(100);
    expect(cut.tail.split('\n').filter(Boolean)).toHaveLength(50);
    expect(cut.omittedLines).toBe(4850);
    expect(cut.fromLine).toBe(101);
    expect(cut.head.endsWith('line 100\n')).toBe(true);
    expect(cut.tail.startsWith('line 4951')).toBe(true);
    expect(cut.totalLines).toBe(5000);
  });

  it('cuts by characters when a few lines are huge', () => {
    const text = 'a'.repeat(50_000) + '\n' + 'b'.repeat(50_000);
    const cut = cutOutput(text, { maxLines: 2000, maxChars: 10_000, headLines: 100, tailLines: 100 })!;
    expect(cut.head.length + cut.tail.length).toBeLessThanOrEqual(10_000);
    expect(cut.head.startsWith('aaa')).toBe(true);
    expect(cut.tail.endsWith('bbb')).toBe(true);
    expect(cut.omittedChars).toBe(text.length - cut.head.length - cut.tail.length);
  });
});

describe('compact-micro plugin', () => {
  let server: ScriptedServer | undefined;
  let ws: Workspace | undefined;
  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  async function run(keelHome: string) {
    server = await startAnthropicServer([callTool('big_output', { lines: 3000 }, 'call_1'), say('done')]);
    const kernel = testKernel([toolsPlugin(bigTool), queryAnthropic(), permissions(), compactMicro()], { baseURL: server.url, keelHome });
    const session = await testSession(kernel, { id: 'sess-1' });
    const result = await runAgent(kernel, session, 'go');
    expect(result.subtype).toBe('success');
    const sent = server.messageRequests()[1]!.body as { messages: Array<{ content: Array<{ type: string; content: string }> }> };
    return sent.messages[2]!.content[0]!.content;
  }

  it('sends head and tail with the marker, and keeps the full output on disk where the marker says', async () => {
    ws = makeWorkspace();
    const content = await run(ws.home);
    expect(content).toMatch(/\[Output truncated: 2600 lines omitted \(lines 201 to 2801/);
    const file = path.join(ws.home, 'tool-outputs', 'sess-1', 'call_1.txt');
    expect(content).toContain(file);
    // It saves what the tool returned, and says exactly that (a tool may have cut its output already).
    expect(content).toContain(`This result as the tool returned it (3000 lines) is saved at ${file}`);
    expect(content).not.toContain('full output');
    expect(content).toContain('read_file');
    const full = readFileSync(file, 'utf8').split('\n');
    expect(full).toHaveLength(3000);
    expect(full[200]).toBe(`line 201: ${'x'.repeat(40)}`);
    expect(content).not.toContain('line 201:');
    expect(content).toContain('line 3000:');
  });

  it('still truncates, and says so, when the full output cannot be saved', async () => {
    ws = makeWorkspace();
    const blocked = path.join(ws.home, 'not-a-dir');
    writeFileSync(blocked, 'a file where a folder should be');
    const content = await run(blocked);
    expect(content).toContain('[Output truncated: 2600 lines omitted');
    expect(content).toContain('could not be saved');
  });
});
