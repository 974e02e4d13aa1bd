/** Git's hooks folders and included config files, found by reading config files as git does (no git runs). */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseGitConfig } from '../../../plugins/permissions/git-config.js';
import { gitSurface } from '../../../plugins/permissions/git-surface.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

const ENV = { GIT_CONFIG_NOSYSTEM: '1' };

describe('parseGitConfig', () => {
  it('reads sections, subsections, quotes, escapes, comments, continuations and bare keys', () => {
    const text = [
      '# comment',
      '[Core]',
      '\thooksPath = "my hooks" ; trailing comment',
      '  bare',
      '[includeIf "gitdir:~/Work/"]',
      '  path = ../a\\',
      'b.inc',
      '[include] path = "q\\"x" # same line as the header',
      '[core.Sub] Key = v w  ',
      'not a key line',
    ].join('\n');
    expect(parseGitConfig(text)).toEqual([
      { key: 'core.hookspath', value: 'my hooks' },
      { key: 'core.bare', value: 'true' },
      { key: 'includeif.gitdir:~/Work/.path', value: '../ab.inc' },
      { key: 'include.path', value: 'q"x' },
      { key: 'core.sub.key', value: 'v w' },
    ]);
  });
});

describe('gitSurface', () => {
  it('finds core.hooksPath (relative to the top of the working tree) and every included file, whatever its condition', () => {
    ws = makeWorkspace();
    const home = ws.path('home');
    mkdirSync(home);
    ws.write('repo/.git/config', '[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../shared.gitconfig\n[includeIf "onbranch:other"]\n\tpath = /abs/elsewhere.inc\n');
    ws.write('repo/shared.gitconfig', '[include]\n\tpath = nested.inc\n[core]\n\thooksPath = ~/global-hooks\n');
    mkdirSync(ws.path('repo/sub'));
    const items = gitSurface(ws.path('repo/sub'), home, ENV);
    const repo = ws.path('repo');
    expect(items).toEqual(expect.arrayContaining([
      { path: path.join(repo, '.husky/_'), kind: 'hooks', from: path.join(repo, '.git/config') },
      // husky 9: the stubs in .husky/_ run the user's scripts one folder up
      { path: path.join(repo, '.husky'), kind: 'hooks', from: path.join(repo, '.git/config') },
      { path: path.join(repo, 'shared.gitconfig'), kind: 'config', from: path.join(repo, '.git/config') },
      { path: path.join(repo, 'nested.inc'), kind: 'config', from: path.join(repo, 'shared.gitconfig') },
      { path: '/abs/elsewhere.inc', kind: 'config', from: path.join(repo, '.git/config') },
      { path: path.join(home, 'global-hooks'), kind: 'hooks', from: path.join(repo, 'shared.gitconfig') },
    ]));
  });

  it("reads the user's global config and a linked worktree's shared config; include loops and FIFOs do not hang", () => {
    ws = makeWorkspace();
    const home = ws.path('home');
    ws.write('home/.gitconfig', '[include]\n\tpath = .gitconfig\n[core]\n\thooksPath = /opt/hooks\n');
    ws.write('main/.git/config', '[include]\n\tpath = fifo\n');
    execFileSync('mkfifo', [ws.path('main/.git/fifo')]);
    ws.write('main/.git/worktrees/wt/commondir', '../..\n');
    ws.write('wt/.git', `gitdir: ${ws.path('main/.git/worktrees/wt')}\n`);
    ws.write('main/.git/worktrees/wt/config.worktree', '[core]\n\thooksPath = wt-hooks\n');
    const items = gitSurface(ws.path('wt'), home, ENV);
    expect(items).toContainEqual({ path: '/opt/hooks', kind: 'hooks', from: path.join(home, '.gitconfig') });
    expect(items).toContainEqual({ path: ws.path('main/.git/fifo'), kind: 'config', from: ws.path('main/.git/config') });
    expect(items).toContainEqual({ path: ws.path('wt/wt-hooks'), kind: 'hooks', from: ws.path('main/.git/worktrees/wt/config.worktree') });
  });

  it('agrees with git on what core.hooksPath is in effect', () => {
    ws = makeWorkspace();
    const repo = ws.path('r');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', repo]);
    writeFileSync(path.join(repo, 'extra.inc'), '[core]\n\thooksPath = "from include"\n');
    execFileSync('git', ['-C', repo, 'config', 'include.path', '../extra.inc']);
    const fromGit = execFileSync('git', ['-C', repo, 'config', '--get', 'core.hooksPath'], { env: { ...process.env, HOME: ws.path('nohome'), ...ENV } }).toString().trim();
    expect(fromGit).toBe('from include');
    const hooks = gitSurface(repo, ws.path('nohome'), ENV).filter((i) => i.kind === 'hooks');
    expect(hooks.map((h) => h.path)).toContain(path.join(repo, fromGit));
  });
});
