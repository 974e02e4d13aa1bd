/** Deny, ask and allow rules hold against the spellings a model would use to get past them. */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { harness, rules } from './setup.js';

let ws: Workspace | undefined;
afterEach(() => ws?.cleanup());

async function decide(command: string, allow: string[], ask: string[], deny: string[], mode: 'auto' | 'ask' = 'auto') {
  ws ??= makeWorkspace();
  const h = await harness({ config: { ...rules(allow, ask, deny), cwd: ws.dir, projectRoot: ws.dir, permissionMode: mode } });
  return h.decide('bash', { command });
}

describe("a subcommand rule holds whatever the program's global options", () => {
  for (const command of ['git -C . push', 'git --no-pager push origin main', 'git -P push', 'git -c a=b push', 'git --git-dir=.git push', 'git --git-dir .git --work-tree . push', 'git --namespace=x push', 'git --exec-path push']) {
    it(`bash(git push:*) denies ${command}`, async () => {
      expect(await decide(command, ['bash(git:*)'], [], ['bash(git push:*)'])).toMatchObject({ behavior: 'deny', reason: expect.stringContaining('bash(git push:*)') });
    });
  }
  for (const command of ['npm --otp 123 publish', 'npm -s publish', 'npm --registry=http://127.0.0.1 publish']) {
    it(`bash(npm publish:*) denies ${command}`, async () => {
      expect(await decide(command, ['bash(npm:*)'], [], ['bash(npm publish:*)'])).toMatchObject({ behavior: 'deny' });
    });
  }
  it('an ask rule holds the same way', async () => {
    expect(await decide('git -C . push', ['bash(git:*)'], ['bash(git push:*)'], [], 'ask')).toMatchObject({ behavior: 'ask', reason: expect.stringContaining('ask rule "bash(git push:*)"') });
  });
  it('an argument that happens to be the denied word is not the subcommand', async () => {
    expect(await decide('git log push', ['bash(git:*)'], [], ['bash(git push:*)'], 'ask')).toMatchObject({ behavior: 'allow' });
    expect(await decide('git --no-pager log --oneline push', ['bash(git:*)'], [], ['bash(git push:*)'], 'ask')).toMatchObject({ behavior: 'allow' });
    expect(await decide('npm run publish', ['bash(npm:*)'], [], ['bash(npm publish:*)'], 'ask')).toMatchObject({ behavior: 'allow' });
  });
});

describe('an alias defined in the command', () => {
  it('is asked while a bash deny rule exists, since its name may run a denied program', async () => {
    expect(await decide('shopt -s expand_aliases\nalias r=rm\nr x', [], [], ['bash(rm:*)'])).toMatchObject({ behavior: 'ask', reason: expect.stringContaining('defines an alias') });
  });
  it('runs as the mode says when no bash deny rule exists', async () => {
    expect(await decide('shopt -s expand_aliases\nalias r=ls\nr', [], [], [])).toMatchObject({ behavior: 'allow' });
    expect(await decide('alias', [], [], ['bash(rm:*)'])).toMatchObject({ behavior: 'allow' });
  });
});

describe('a tilde-prefix bash expands (~user, ~+, ~-)', () => {
  const me = os.userInfo();
  it('is not vouched for by an allow rule matching the text', async () => {
    for (const command of ['cat ~+/../x', 'cat ~-/x', 'cat ~nobody/x', 'cat ~2/x']) {
      expect(await decide(command, ['bash(cat:*)'], [], [], 'ask'), command).toMatchObject({ behavior: 'ask' });
    }
  });
  it("our own name is our home folder: reading its ~/.ssh is asked in every mode", async () => {
    // bash looks ~name up in the user database; the protected ~/.ssh is under $HOME, the same folder here.
    if (me.homedir !== os.homedir()) return;
    expect(await decide(`cat ~${me.username}/.ssh/id_rsa`, ['bash(cat:*)'], [], [])).toMatchObject({ behavior: 'ask', reason: expect.stringContaining('protected path') });
  });
  it('is asked with a read deny rule, which cannot vouch for a path known only at run time', async () => {
    expect(await decide('cat ~+/.env', [], [], ['read_file(.env)'])).toMatchObject({ behavior: 'ask', reason: expect.stringContaining('known only at run time') });
  });
  it('still counts for the shell guard', async () => {
    expect(await decide(`rm -rf ~${me.username}`, [], [], [])).toMatchObject({ behavior: 'deny', reason: expect.stringContaining('shell guard') });
  });
});

describe("a read deny rule holds for git's object store", () => {
  const deny = ['read_file(secrets/**)'];
  for (const command of ['git show HEAD:secrets/a', 'git show HEAD:./secrets/a', 'git cat-file -p :secrets/a', 'git show :0:secrets/a', 'git diff HEAD:secrets/a HEAD:README.md', 'git grep token', 'git archive HEAD', 'git archive HEAD secrets']) {
    it(`denies ${command}`, async () => {
      ws = makeWorkspace();
      mkdirSync(path.join(ws.dir, 'secrets'));
      writeFileSync(path.join(ws.dir, 'secrets', 'a'), 'x');
      expect(await decide(command, ['bash(git:*)'], [], deny)).toMatchObject({ behavior: 'deny', reason: expect.stringContaining('read_file(secrets/**)') });
    });
  }
  it('leaves named paths, other revisions and URLs alone', async () => {
    for (const command of ['git grep token -- src', 'git archive HEAD src', 'git show HEAD:README.md', 'git clone https://127.0.0.1/x.git', 'git push origin main:main']) {
      expect(await decide(command, ['bash(git:*)'], [], deny, 'ask'), command).toMatchObject({ behavior: 'allow' });
    }
  });
});

describe('web_fetch rules compare hosts as the fetch resolves them', () => {
  it('a domain rule holds for a trailing dot, upper case and an IDN written either way', async () => {
    const { urlPatternMatches } = await import('../../../plugins/permissions/rules.js');
    for (const url of ['https://evil.example./x', 'https://EVIL.example../x', 'https://a.evil.example.:443/x']) expect(urlPatternMatches('domain:evil.example', url), url).toBe(true);
    expect(urlPatternMatches('domain:例え.jp', 'https://例え.jp/')).toBe(true);
    expect(urlPatternMatches('domain:例え.jp', 'https://xn--r8jz45g.jp/')).toBe(true);
    expect(urlPatternMatches('domain:*.evil.example', 'https://a.evil.example./')).toBe(true);
    expect(urlPatternMatches('domain:*.evil.example', 'https://evil.example/')).toBe(false);
    expect(urlPatternMatches('domain:evil.example', 'https://evil.example.net/')).toBe(false);
  });
  it('a URL rule covers every path below its *, whatever the host case', async () => {
    const { urlPatternMatches } = await import('../../../plugins/permissions/rules.js');
    expect(urlPatternMatches('https://evil.example/*', 'https://evil.example/a/b?c')).toBe(true);
    expect(urlPatternMatches('https://evil.example/*', 'https://EVIL.example./a')).toBe(true);
    expect(urlPatternMatches('https://evil.example/*', 'https://good.example/evil.example/')).toBe(false);
  });
  it('a deny rule refuses the spelled-around call through the policy', async () => {
    ws = makeWorkspace();
    const h = await harness({ config: { ...rules(['web_fetch'], [], ['WebFetch(domain:evil.example)']), cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'auto' } });
    expect(await h.decide('web_fetch', { url: 'https://evil.example./steal' })).toMatchObject({ behavior: 'deny' });
  });
  it('a domain that is no host is refused when the rule is read, naming the rule', async () => {
    const { parseRule } = await import('../../../plugins/permissions/rules.js');
    expect(() => parseRule('deny', 'WebFetch(domain:)', 'agent.config.ts: permissions.deny[0]')).toThrow('agent.config.ts: permissions.deny[0]: invalid permission rule "WebFetch(domain:)": "" is not a domain (e.g. domain:example.com)');
    expect(() => parseRule('deny', 'web_fetch(domain:exa mple.com)', 'x')).toThrow('"exa mple.com" is not a domain');
  });
});

describe('while a bash deny rule exists, code the text does not show is asked', () => {
  const hidden: Array<[string, RegExp]> = [
    ["echo 'rm x' | bash", /feeds a shell its commands on stdin/],
    ["echo 'rm x' | sh -s", /feeds a shell its commands on stdin/],
    ['bash <(echo rm x)', /script known only at run time/],
    ['source <(echo rm x)', /script known only at run time/],
    ['. "$f"', /script known only at run time/],
    ["echo 'import os' | python3", /feeds python3 its code on stdin/],
    ["python3 -c 'import os; os.system(\"rm x\")'", /python3 runs inline code/],
    ["awk 'BEGIN { system(\"rm x\") }'", /runs commands/],
    ["sed -n '1e rm x' f", /the e command/],
    ["git -c core.pager='rm -rf x' log", /git -c sets configuration/],
    ["GIT_SSH_COMMAND='rm x' git fetch", /sets GIT_SSH_COMMAND/],
    ["env PAGER='rm x' git log", /sets PAGER/],
    ["export GIT_PAGER='rm x'; git log", /sets GIT_PAGER/],
    ['declare -x BASH_ENV=./evil.sh; bash -c ls', /sets BASH_ENV/],
    ['PATH=./evil:$PATH ls', /sets PATH/],
    ['NODE_OPTIONS=--require=./x.js node app.js', /sets NODE_OPTIONS/],
  ];
  for (const [command, why] of hidden) {
    it(`asks about ${command}`, async () => {
      expect(await decide(command, [], [], ['bash(rm:*)'])).toMatchObject({ behavior: 'ask', reason: expect.stringMatching(why) });
    });
  }
  it('judges what it can read: literal scripts, find -exec and xargs name their programs', async () => {
    expect(await decide("bash -c 'rm x'", [], [], ['bash(rm:*)'])).toMatchObject({ behavior: 'deny' });
    expect(await decide('bash <<EOF\nrm x\nEOF', [], [], ['bash(rm:*)'])).toMatchObject({ behavior: 'deny' });
    expect(await decide("bash -c 'ls'", [], [], ['bash(rm:*)'])).toMatchObject({ behavior: 'allow' });
    expect(await decide('find . -name x -exec grep -l y {} +', [], [], ['bash(rm:*)'])).toMatchObject({ behavior: 'allow' });
    expect(await decide('git ls-files | xargs wc -l', [], [], ['bash(rm:*)'])).toMatchObject({ behavior: 'allow' });
  });
  it('runs as the mode says with no bash deny rule', async () => {
    expect(await decide("echo 'ls' | bash", [], [], [])).toMatchObject({ behavior: 'allow' });
    expect(await decide("python3 -c 'print(1)'", [], [], [])).toMatchObject({ behavior: 'allow' });
    expect(await decide("GIT_PAGER='cat' git log", [], [], [])).toMatchObject({ behavior: 'allow' });
  });
  it('leaves variables that carry no code alone', async () => {
    for (const command of ['LANG=C sort f', 'FOO=1 ls', 'export FOO=1', 'env TZ=UTC date']) expect(await decide(command, [], [], ['bash(rm:*)']), command).toMatchObject({ behavior: 'allow' });
  });
});

describe('a path deny or ask rule holds for every tool that reads, or writes, the same files', () => {
  it('Edit(…) denies write_file and Write(…) denies edit_file; Read(…) denies grep, glob and ls on the path', async () => {
    ws = makeWorkspace();
    mkdirSync(path.join(ws.dir, 'secrets'));
    writeFileSync(path.join(ws.dir, 'secrets', 'a'), 'x');
    const editTool = { ...(await import('./setup.js')).writeTool, name: 'edit_file' };
    const grepTool = { ...(await import('./setup.js')).readTool, name: 'grep' };
    const at = (deny: string) => harness({ config: { ...rules([], [], [deny]), cwd: ws!.dir, projectRoot: ws!.dir, permissionMode: 'auto' }, extraTools: [editTool, grepTool] });
    expect(await (await at('Edit(./secrets/**)')).decide('write_file', { path: 'secrets/new' })).toMatchObject({ behavior: 'deny', reason: expect.stringContaining('Edit(./secrets/**)') });
    expect(await (await at('Write(./secrets/**)')).decide('edit_file', { path: 'secrets/a' })).toMatchObject({ behavior: 'deny' });
    expect(await (await at('Read(./secrets/**)')).decide('grep', { path: 'secrets' })).toMatchObject({ behavior: 'deny' });
    // Reading and writing stay apart: an Edit deny does not stop reads, nor a Read deny writes.
    expect(await (await at('Edit(./secrets/**)')).decide('read_file', { path: 'secrets/a' })).toMatchObject({ behavior: 'allow' });
    expect(await (await at('Read(./secrets/**)')).decide('write_file', { path: 'secrets/new' })).toMatchObject({ behavior: 'allow' });
  });
  it('an ask rule too; an allow rule stays with its own tool', async () => {
    ws = makeWorkspace();
    const editTool = { ...(await import('./setup.js')).writeTool, name: 'edit_file' };
    const h = await harness({ config: { ...rules(['Edit(src/**)'], ['edit_file(docs/**)'], []), cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'edits' }, extraTools: [editTool] });
    expect(await h.decide('write_file', { path: 'docs/x.md' })).toMatchObject({ behavior: 'ask', reason: expect.stringContaining('ask rule') });
    const ask = await harness({ config: { ...rules(['Edit(src/**)'], [], []), cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'ask' }, extraTools: [editTool] });
    expect(await ask.decide('write_file', { path: 'src/x.ts' })).toMatchObject({ behavior: 'ask' });
  });
});
