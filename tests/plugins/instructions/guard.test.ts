/** What instruction files and their imports may read, and what an untrusted folder's front matter may do. */
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkRead, expand, importsOf, realPath, type ReadGuard } from '../../../plugins/instructions/files.js';
import instructions from '../../../plugins/instructions/index.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

function guard(trusted: boolean): ReadGuard {
  return { root: realPath(ws.dir), trusted, secret: (p) => (p.includes(`${path.sep}secret${path.sep}`) ? `${p} is a secret` : undefined) };
}

describe('importsOf', () => {
  it.each([
    ['@~/.claude/notes.md', ['~/.claude/notes.md']],
    ['@../../docs/a.md and @./b.md', ['../../docs/a.md', './b.md']],
    ['@/etc/passwd.', ['/etc/passwd']],
    ['@.env', ['.env']],
    ['mail me@example.com or @... or @.', []],
    ['`@code/x.md` is code', []],
  ])('%j → %j', (text, refs) => expect(importsOf(text)).toEqual(refs));
});

describe('checkRead', () => {
  it('untrusted: inside the project is fine; outside (directly or through a link) and hard links are refused', () => {
    ws = makeWorkspace({ git: true });
    const outside = path.join(path.dirname(ws.dir), 'out.md');
    writeFileSync(outside, 'x');
    const inside = ws.write('docs/in.md', 'x');
    symlinkSync(outside, ws.path('docs/link.md'));
    linkSync(outside, ws.path('docs/hard.md'));
    expect(checkRead(inside, 'project', guard(false)).refused).toBeUndefined();
    expect(checkRead(outside, 'project', guard(false)).refused).toMatch(/outside the untrusted project/);
    expect(checkRead(ws.path('docs/link.md'), 'project', guard(false))).toEqual({ real: realPath(outside), refused: expect.stringMatching(/outside the untrusted project/) });
    expect(checkRead(ws.path('docs/hard.md'), 'project', guard(false)).refused).toMatch(/2 hard links/);
    expect(checkRead(ws.path('docs/hard.md'), 'project', guard(true)).refused).toBeUndefined();
    expect(checkRead(outside, 'user', guard(false)).refused).toBeUndefined();
  });

  it('secrets are refused in every folder, for every layer', () => {
    ws = makeWorkspace({ git: true });
    const secret = ws.write('secret/key.md', 'x');
    for (const trusted of [true, false]) {
      expect(checkRead(secret, 'project', guard(trusted)).refused).toMatch(/is a secret/);
      expect(checkRead(secret, 'user', guard(trusted)).refused).toMatch(/is a secret/);
    }
  });
});

describe('expand with a guard', () => {
  it('leaves a refused import out with one warning naming the file and the reference, and reads the rest', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('secret/key.md', 'TOP SECRET');
    ws.write('docs/ok.md', 'fine text');
    const file = ws.write('AGENTS.md', 'see @secret/key.md and @docs/ok.md');
    const warnings: string[] = [];
    const out = await expand(file, 'see @secret/key.md and @docs/ok.md', (m) => warnings.push(m), guard(true));
    expect(out.text).toContain('fine text');
    expect(out.text).not.toContain('TOP SECRET');
    expect(warnings).toEqual([`${file}: @secret/key.md: import refused: ${realPath(ws.path('secret/key.md'))} is a secret`]);
  });
});

describe('configLayers in an untrusted folder', () => {
  it('names front matter files with empty values and never parses their YAML', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('AGENTS.md', '---\n: : [broken\n---\nbody\n');
    ws.write('CLAUDE.md', 'no front matter\n');
    mkdirSync(path.join(ws.home), { recursive: true });
    writeFileSync(path.join(ws.home, 'AGENTS.md'), '---\nmodel: mine\n---\n');
    const layers = await instructions().configLayers!({ cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home, trusted: false });
    expect(layers).toEqual([
      { kind: 'user', source: path.join(ws.home, 'AGENTS.md'), values: { model: 'mine' } },
      { kind: 'project', source: ws.path('AGENTS.md'), values: {} },
    ]);
  });

  it('trusted, the same broken YAML is an error naming the file', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('AGENTS.md', '---\nkey: [broken\n---\nbody\n');
    await expect(instructions().configLayers!({ cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home, trusted: true })).rejects.toThrow(
      `${ws.path('AGENTS.md')}: front matter is not valid YAML`,
    );
  });
});
