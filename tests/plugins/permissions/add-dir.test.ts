import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { harness, rules, type Harness } from './setup.js';

let ws: Workspace | undefined;
let other: string | undefined;
afterEach(() => {
  ws?.cleanup();
  if (other) rmSync(other, { recursive: true, force: true });
  ws = undefined;
  other = undefined;
});

async function run(h: Harness, args: string): Promise<string> {
  const command = h.kernel.commands.get('add-dir')!;
  return String(await command.run(args, { kernel: h.kernel, session: h.session, print: () => undefined, signal: new AbortController().signal }));
}

describe('--add-dir (additionalDirectories)', () => {
  it('counts as inside the project, while its always-asked paths stay asked in every mode', async () => {
    ws = makeWorkspace();
    other = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'keel-added-')));
    mkdirSync(path.join(other, '.git', 'hooks'), { recursive: true });
    writeFileSync(path.join(other, 'notes.md'), 'x');
    writeFileSync(path.join(other, '.env'), 'TOKEN=x');
    const at = (p: string) => path.join(other!, p);
    const session = { cwd: ws.dir, projectRoot: ws.dir };
    const edits = await harness({ config: { ...rules(['bash(cat:*)', 'bash(ls:*)']), cwd: ws.dir, projectRoot: ws.dir, additionalDirectories: [other], permissionMode: 'edits' }, session });
    expect((await edits.decide('write_file', { path: at('notes.md') }))?.behavior).toBe('allow');
    expect((await edits.decide('bash', { command: `cat ${at('notes.md')}` }))?.behavior).toBe('allow');
    expect((await edits.decide('bash', { command: `cd ${other} && ls` }))?.behavior).toBe('allow');
    const auto = await harness({ config: { cwd: ws.dir, projectRoot: ws.dir, additionalDirectories: [other], permissionMode: 'auto' }, session });
    for (const d of [edits, auto]) {
      expect((await d.decide('write_file', { path: at('.git/hooks/pre-commit') }))?.behavior).toBe('ask');
      expect((await d.decide('read_file', { path: at('.env') }))?.behavior).toBe('ask');
      expect((await d.decide('bash', { command: `cat ${at('.env')}` }))?.behavior).toBe('ask');
      expect((await d.decide('bash', { command: `echo x > ${at('.git/hooks/pre-commit')}` }))?.behavior).toBe('ask');
    }
  });
});

describe('/add-dir', () => {
  it('makes a folder outside the project count as inside for this session, as --add-dir does', async () => {
    ws = makeWorkspace();
    other = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'keel-added-')));
    writeFileSync(path.join(other, 'notes.md'), 'x');
    const h = await harness({ config: { cwd: ws.dir, projectRoot: ws.dir }, session: { cwd: ws.dir, projectRoot: ws.dir } });
    const outside = await h.decide('read_file', { path: path.join(other, 'notes.md') });
    expect(outside?.behavior).not.toBe('allow');
    expect(await run(h, other)).toBe(`Added ${other}: the tools may work there for this session (as with --add-dir ${other}).`);
    expect((await h.decide('read_file', { path: path.join(other, 'notes.md') }))?.behavior).toBe('allow');
    // The same answer --add-dir gives.
    const flagged = await harness({ config: { cwd: ws.dir, projectRoot: ws.dir, additionalDirectories: [other] }, session: { cwd: ws.dir, projectRoot: ws.dir } });
    expect(await flagged.decide('read_file', { path: path.join(other, 'notes.md') })).toEqual(await h.decide('read_file', { path: path.join(other, 'notes.md') }));
    expect(await run(h, '')).toBe(`Folders besides the project:\n  ${other}`);
    expect(await run(h, other)).toBe(`${other} is already inside the project or an added folder.`);
    // Another session of the same kernel does not inherit it.
    const next = await harness({ config: { cwd: ws.dir, projectRoot: ws.dir }, session: { cwd: ws.dir, projectRoot: ws.dir } });
    expect((await next.decide('read_file', { path: path.join(other, 'notes.md') }))?.behavior).not.toBe('allow');
  });

  it('refuses a missing folder, a file, the file system root and the home folder, naming what was given', async () => {
    ws = makeWorkspace();
    mkdirSync(ws.path('sub'), { recursive: true });
    writeFileSync(ws.path('file.txt'), 'x');
    const h = await harness({ config: { cwd: ws.dir, projectRoot: ws.dir }, session: { cwd: ws.dir, projectRoot: ws.dir } });
    await expect(run(h, 'no-such-dir')).rejects.toThrow('no-such-dir: no such folder');
    await expect(run(h, 'file.txt')).rejects.toThrow('file.txt: not a folder');
    await expect(run(h, '/')).rejects.toThrow('/: that would open the whole file system; name a narrower folder');
    await expect(run(h, '~')).rejects.toThrow('~: that would open your whole home folder; name a narrower folder');
    expect(await run(h, 'sub')).toMatch(/is already inside the project/);
  });
});
