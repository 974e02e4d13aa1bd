import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Answer, Kernel, Plugin, Question, Session } from '../../../kernel/index.js';
import claudeCommands from '../../../plugins/claude-commands/index.js';
import { formatContext, measureContext } from '../../../plugins/claude-commands/context.js';
import { conversationMarkdown, writeExport } from '../../../plugins/claude-commands/export.js';
import { reviewPrompt } from '../../../plugins/claude-commands/review.js';
import systemPrompt from '../../../plugins/system-prompt/index.js';
import { safeFiles } from '../../../plugins/tools-fs/safe-files.js';
import { testKernel, testSession } from '../../helpers/kernel.js';

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function temp(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-commands-'));
  temps.push(dir);
  return dir;
}

const run = (kernel: Kernel, session: Session, name: string, args = '') =>
  kernel.commands.get(name)!.run(args, { kernel, session, print: () => undefined, signal: new AbortController().signal });

describe('/export', () => {
  it('renders user and assistant turns, tool calls and results; thinking is left out, images named', () => {
    const session = {
      id: 's1',
      projectRoot: '/p',
      model: 'm',
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'secret musing', signature: 'x' }, { type: 'text', text: 'Looking.' }, { type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'a.md' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'file text' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } }], is_error: true }] },
        { role: 'assistant', content: 'Done.' },
      ],
    } as unknown as Session;
    const md = conversationMarkdown(session, new Date('2026-01-02T03:04:05Z'));
    expect(md).toBe(
      [
        '# Keel session s1\n\n- Project: /p\n- Model: m\n- Exported: 2026-01-02T03:04:05.000Z',
        '## User\n\nhello',
        '## Assistant\n\nLooking.\n\n**Tool call: read_file**\n\n```json\n{\n  "path": "a.md"\n}\n```',
        '**Result (error)**\n\n```\nfile text\n[image]\n```',
        '## Assistant\n\nDone.\n',
      ].join('\n\n'),
    );
    expect(md).not.toContain('secret musing');
  });

  it('writes a new file, and never over one that exists', async () => {
    const dir = temp();
    const file = path.join(dir, 'deep', 'chat.md');
    await writeExport(safeFiles, file, 'one');
    expect(readFileSync(file, 'utf8')).toBe('one');
    await expect(writeExport(safeFiles, file, 'two')).rejects.toThrow(`${file} already exists; name another file`);
    expect(readFileSync(file, 'utf8')).toBe('one');
  });

  it("writing a file without the file tools' safe-files service says which plugin offers it; /export alone still prints", async () => {
    const dir = temp();
    const kernel = testKernel([claudeCommands()], { cwd: dir });
    const session = await testSession(kernel, { cwd: dir });
    await expect(run(kernel, session, 'export', 'chat.md')).rejects.toThrow("writing a file needs the file tools' safe-files service (plugin tools-fs), which this agent does not have; /export alone prints the conversation");
    expect(existsSync(path.join(dir, 'chat.md'))).toBe(false);
    expect(await run(kernel, session, 'export')).toMatch(/^# Keel session /);
  });
});

describe('/context', () => {
  it('credits each system block to the plugin that added it and counts tools and messages', async () => {
    const extra: Plugin = {
      name: 'extra-section',
      kernel: '^1.0.0',
      apply: (k) => void k.hooks.contextLoad.tapPromise('extra-section', async (c) => ({ ...c, system: [...c.system, { type: 'text', text: 'x'.repeat(400) }] })),
    };
    const kernel = testKernel([systemPrompt(), extra, claudeCommands()], { contextWindow: 1000 });
    const session = await testSession(kernel);
    session.messages.push({ role: 'user', content: 'y'.repeat(396) });
    kernel.state.set({ contextWindow: 1000 });
    const report = await measureContext(kernel, session);
    const part = (label: string) => report.parts.find((p) => p.label === label)?.tokens;
    expect(part('Other (extra-section)')).toBe(100);
    expect(part('System prompt')).toBeGreaterThan(50);
    expect(part('Messages')).toBeGreaterThan(100);
    expect(report.window).toBe(1000);
    const text = formatContext(report, { colour: false, width: 20 });
    expect(text.split('\n')[0]).toMatch(/^Context: about \d+ of 1k tokens \([\d.]+%\)$/);
    expect(text.split('\n')[1]).toMatch(/^\[.{20}\]$/u);
    expect(text).toMatch(/^ {2}· Free space\s+\d+ tokens/m);
    expect(formatContext(report, { colour: true, width: 20 })).toContain('\x1b[36m');
  });
});

describe('/review', () => {
  it('puts the diff in a fence longer than any backtick run in it, and names what was cut', () => {
    const prompt = reviewPrompt({ title: 'the changes', diff: '+const s = `````;\n', untracked: [], truncated: true }, '');
    expect(prompt).toContain('``````diff\n+const s = `````;\n``````');
    expect(prompt).toContain('(cut at 200000 characters; read the files for the rest)');
    expect(prompt).not.toContain('focus on');
  });
});

describe('/login', () => {
  function loginKernel(answer: Answer | undefined, auth: { verify?(k: string): Promise<void>; use?(k: string): void }, keelHome: string) {
    const host: Plugin = {
      name: 'host',
      kernel: '^1.0.0',
      apply(k) {
        k.hooks.askUser.tapPromise('host', async (q: Question) => (q.kind === 'text' && q.secret ? answer : undefined));
        k.services.provide('auth', auth);
      },
    };
    return testKernel([host, claudeCommands()], { keelHome });
  }

  it('asks for the key hidden, checks it, stores it (mode 600) and hands it to the provider', async () => {
    const home = temp();
    const used: string[] = [];
    const kernel = loginKernel({ kind: 'text', text: ' sk-good \n' }, { verify: async () => undefined, use: (k) => used.push(k) }, home);
    const out = await run(kernel, await testSession(kernel), 'login');
    expect(out).toBe(`Key stored in ${path.join(home, 'auth.json')} (checked with the API); this session uses it now.`);
    expect(JSON.parse(readFileSync(path.join(home, 'auth.json'), 'utf8'))).toEqual({ apiKey: 'sk-good' });
    expect(statSync(path.join(home, 'auth.json')).mode & 0o777).toBe(0o600);
    expect(used).toEqual(['sk-good']);
  });

  it('a refused key, or none, leaves the stored key as it was', async () => {
    const home = temp();
    writeFileSync(path.join(home, 'auth.json'), '{"apiKey":"old"}');
    const refused = loginKernel({ kind: 'text', text: 'sk-bad' }, { verify: async () => Promise.reject(new Error('401 invalid x-api-key')) }, home);
    await expect(run(refused, await testSession(refused), 'login')).rejects.toThrow('the key was refused, so it was not stored: 401 invalid x-api-key');
    const none = loginKernel(undefined, {}, home);
    await expect(run(none, await testSession(none), 'login')).rejects.toThrow(/^no key entered; nothing changed/);
    expect(readFileSync(path.join(home, 'auth.json'), 'utf8')).toBe('{"apiKey":"old"}');
  });
});
