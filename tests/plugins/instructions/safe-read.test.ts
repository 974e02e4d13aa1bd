/** The one reader of the Markdown files Keel loads by name (safe-read.ts), and the `project-files` service over it. */
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import instructions from '../../../plugins/instructions/index.js';
import outputStyles from '../../../plugins/output-styles/index.js';
import skills from '../../../plugins/skills/index.js';
import toolAgent from '../../../plugins/tool-agent/index.js';
import { MAX_FILE_BYTES, NotReadError, readFileSafely, readHeadSafely } from '../../../plugins/instructions/safe-read.js';
import { testKernel } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

/** A file outside the project, beside it in the workspace's temp folder. */
function outsideFile(name: string, text: string): string {
  const file = path.join(path.dirname(ws.dir), 'outside', name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

describe('readFileSafely', () => {
  it('reads a regular file up to the limit; one byte more is refused, naming the size', async () => {
    ws = makeWorkspace();
    expect(await readFileSafely(ws.write('ok.md', 'x'.repeat(MAX_FILE_BYTES)))).toHaveLength(MAX_FILE_BYTES);
    await expect(readFileSafely(ws.write('big.md', 'x'.repeat(MAX_FILE_BYTES + 1)))).rejects.toThrow(`is larger than ${MAX_FILE_BYTES} bytes (${MAX_FILE_BYTES + 1})`);
    await expect(readFileSafely(ws.write('style.md', 'x'.repeat(11)), { maxBytes: 10 })).rejects.toThrow(/^not read: .* is larger than 10 bytes \(11\)$/);
  });

  it('refuses a FIFO (without waiting for a writer), a device and a folder, directly or through a link', async () => {
    ws = makeWorkspace();
    execFileSync('mkfifo', [ws.path('pipe.md')]);
    symlinkSync(ws.path('pipe.md'), ws.path('to-pipe.md'));
    symlinkSync('/dev/zero', ws.path('zero.md'));
    mkdirSync(ws.path('folder.md'));
    for (const name of ['pipe.md', 'to-pipe.md', 'zero.md', 'folder.md']) {
      const refusal = readFileSafely(ws.path(name));
      await expect(refusal, name).rejects.toBeInstanceOf(NotReadError);
      await expect(refusal, name).rejects.toThrow(/^not read: .* is not a regular file$/);
    }
  });

  it('a missing file or a dangling link cannot be read, and says why in one word', async () => {
    ws = makeWorkspace();
    symlinkSync(ws.path('nowhere.md'), ws.path('dangling.md'));
    await expect(readFileSafely(ws.path('dangling.md'))).rejects.toThrow(/^cannot be read: ENOENT$/);
  });

  it('refuses a link to a secret whatever the trust; confined, also a link outside and a hard link', async () => {
    ws = makeWorkspace();
    const secret = outsideFile('id_rsa', 'CANARY-SECRET');
    const other = outsideFile('notes.md', 'CANARY-OUTSIDE');
    symlinkSync(secret, ws.path('key.md'));
    symlinkSync(other, ws.path('notes.md'));
    linkSync(other, ws.path('hard.md'));
    const isSecret = (real: string) => (real === secret ? `${real} is SSH keys` : undefined);
    await expect(readFileSafely(ws.path('key.md'), { secret: isSecret })).rejects.toThrow(/^not read: .*id_rsa is SSH keys$/);
    await expect(readFileSafely(ws.path('notes.md'), { secret: isSecret, confineTo: ws.dir })).rejects.toThrow(`outside the untrusted project ${ws.dir}`);
    await expect(readFileSafely(ws.path('hard.md'), { secret: isSecret, confineTo: ws.dir })).rejects.toThrow(/has 2 hard links/);
    // Not confined (a trusted project): a link outside and a hard link are read.
    expect(await readFileSafely(ws.path('notes.md'), { secret: isSecret })).toBe('CANARY-OUTSIDE');
    expect(await readFileSafely(ws.path('hard.md'), { secret: isSecret })).toBe('CANARY-OUTSIDE');
  });
});

describe('readHeadSafely', () => {
  it('cuts a larger file to its head and says its size; refuses what readFileSafely refuses', async () => {
    ws = makeWorkspace();
    expect(await readHeadSafely(ws.write('long.md', 'x'.repeat(20)), { maxBytes: 10 })).toEqual({ text: 'x'.repeat(10), size: 20 });
    execFileSync('mkfifo', [ws.path('pipe.md')]);
    await expect(readHeadSafely(ws.path('pipe.md'))).rejects.toThrow(/^not read: .* is not a regular file$/);
    const other = outsideFile('notes.md', 'CANARY-OUTSIDE');
    symlinkSync(other, ws.path('notes.md'));
    await expect(readHeadSafely(ws.path('notes.md'), { confineTo: ws.dir })).rejects.toThrow(/outside the untrusted project/);
  });
});

describe('the project-files service', () => {
  function service(trusted: boolean) {
    return testKernel([instructions()], { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir, trusted }).services.require('project-files', 'test');
  }

  it("judges a project's file by the kernel's read-protected paths and trust; a file not the project's only as a file", async () => {
    ws = makeWorkspace({ git: true });
    ws.write('.env', 'TOKEN=CANARY-DOTENV');
    mkdirSync(ws.path('cmds'));
    symlinkSync('../.env', ws.path('cmds/env-link.md'));
    const other = outsideFile('notes.md', 'CANARY-OUTSIDE');
    symlinkSync(other, ws.path('cmds/outside.md'));
    for (const trusted of [true, false]) {
      await expect(service(trusted).read(ws.path('cmds/env-link.md'), { project: ws.dir }), `trusted ${trusted}`).rejects.toThrow(/^not read: .*\.env is a dotenv file/);
    }
    await expect(service(false).read(ws.path('cmds/outside.md'), { project: ws.dir })).rejects.toThrow(/outside the untrusted project/);
    expect(await service(true).read(ws.path('cmds/outside.md'), { project: ws.dir })).toBe('CANARY-OUTSIDE');
    // Without `project` (a user's file), only the file checks apply.
    expect(await service(false).read(ws.path('cmds/outside.md'))).toBe('CANARY-OUTSIDE');
    await expect(service(true).read(ws.write('cmds/long.md', 'x'.repeat(11)), { maxBytes: 10 })).rejects.toThrow(/larger than 10 bytes/);
  });

  it('confined: a trusted project\'s file must resolve inside it too (Keel\'s own .keel/), and a refusal carries its reason, a missing file its code', async () => {
    ws = makeWorkspace({ git: true });
    mkdirSync(ws.path('.keel'));
    symlinkSync(outsideFile('MEMORY.md', 'CANARY-OUTSIDE'), ws.path('.keel/MEMORY.md'));
    const refusal = service(true).head(ws.path('.keel/MEMORY.md'), { project: ws.dir, confined: true });
    await expect(refusal).rejects.toThrow(/^not read: .* is outside the project /);
    await expect(refusal).rejects.toMatchObject({ reason: expect.stringMatching(/^\/.* is outside the project /) });
    await expect(service(true).head(ws.path('.keel/none.md'), { project: ws.dir, confined: true })).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('the plugins that read through it', () => {
  it.each([
    ['skills', skills],
    ['output-styles', outputStyles],
    ['tool-agent', toolAgent],
  ] as const)('%s does not start without instructions, naming the dependency', (_name, plugin) => {
    ws = makeWorkspace({ git: true });
    const made = plugin();
    expect(() => testKernel([made], { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir })).toThrow(new RegExp(`${made.name}.*depends on "instructions"`));
  });
});
