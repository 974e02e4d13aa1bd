/** Bash commands judged by what they do: flags that write or run, paths resolved where the shell touches them. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PermissionMode } from '../../../kernel/index.js';
import { sedScriptEffects } from '../../../plugins/permissions/effects.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { harness, rules } from './setup.js';

let ws: Workspace;
let outside: string;
beforeAll(() => {
  ws = makeWorkspace({ git: true });
  outside = path.join(path.dirname(ws.dir), 'outside-fx');
  mkdirSync(outside, { recursive: true });
  writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  ws.write('.env', 'TOKEN=x\n');
  ws.write('src/a.txt', 'a\n');
  ws.write('secrets/key.txt', 'k\n');
});
afterAll(() => ws.cleanup());

async function decide(mode: PermissionMode, command: string, allow: string[] = [], deny: string[] = [], workdir?: string) {
  const h = await harness({ config: rules(allow, [], deny), session: { permissionMode: mode, cwd: ws.dir, projectRoot: ws.dir } });
  return h.decide('bash', workdir ? { command, workdir } : { command });
}

/** Allowed by its rule's text, but the flags make it do more: asked in ask mode. */
const BEYOND_TEXT: Array<[string, string]> = [
  ['bash(git diff:*)', 'git diff --output=out.txt'],
  ['bash(git diff:*)', 'git diff --no-index /etc/hostname README.md'],
  ['bash(git diff:*)', 'git diff --ext-diff'],
  ['bash(git diff:*)', 'git -c diff.external=./x diff'],
  ['bash(git:*)', 'git --config-env=core.pager=EVIL log'],
  ['bash(git:*)', 'git -C /tmp status'],
  ['bash(printf:*)', "printf -v 'a[$(touch x)]' %s 1"],
  ['bash(printf:*)', 'printf -v out %s 1'],
  ['bash(read:*)', "read 'a[$(id)]' < /dev/null"],
  ['bash(find:*)', 'find . -exec touch x {} ;'],
  ['bash(find:*)', 'find . -name "*.o" -delete'],
  ['bash(find:*)', 'find . -fprint out.txt'],
  ['bash(find:*)', 'find . -okdir rm {} +'],
  ['bash(sed:*)', 'sed -i s/a/b/ src/a.txt'],
  ['bash(sed:*)', 'sed -n 1e\\ id src/a.txt'],
  ["bash(sed:*)", "sed 's/a/id/e' src/a.txt"],
  ['bash(sed:*)', 'sed "w out.txt" src/a.txt'],
  ['bash(perl:*)', 'perl -pi -e s/a/b/ src/a.txt'],
  ['bash(perl:*)', 'perl -e "print 1"'],
  ['bash(python3:*)', 'python3 -c "print(1)"'],
  ['bash(node:*)', 'node -e "1"'],
  ['bash(ruby:*)', 'ruby -e "1"'],
  ['bash(awk:*)', `awk 'BEGIN { system("id") }'`],
  ['bash(awk:*)', `awk '{ print > "out.txt" }' src/a.txt`],
  ['bash(sort:*)', 'sort -o out.txt src/a.txt'],
  ['bash(sort:*)', 'sort --compress-program=./x src/a.txt'],
  ['bash(rsync:*)', 'rsync -e ./x a b'],
  ['bash(tar:*)', 'tar --to-command=./x -xf a.tar'],
  ['bash(tar:*)', 'tar -I ./x -cf a.tar src'],
  ['bash(env:*)', 'env -S "touch x"'],
  ['bash(xargs:*)', 'xargs touch'],
  ['bash(curl:*)', 'curl -o out.txt http://127.0.0.1/'],
  ['bash(wget:*)', 'wget -O out.txt http://127.0.0.1/'],
  ['bash(tee:*)', 'tee ../outside-fx/out.txt'],
  ['bash(cp:*)', 'cp src/a.txt ../outside-fx/'],
  ['bash(cat:*)', 'cat /etc/hostname'],
  ['bash(cat:*)', 'cat ../outside-fx/secret.txt'],
  ['bash(npm test)', 'cd .. && npm test'],
  ['bash(uniq:*)', 'uniq src/a.txt ../outside-fx/out.txt'],
  ['bash(dd:*)', 'dd if=src/a.txt of=/tmp/out.txt'],
  ['bash(touch:*)', 'touch ../outside-fx/x'],
];

describe('an allow rule never vouches for what flags turn a command into', () => {
  for (const [rule, command] of BEYOND_TEXT) {
    it(`${rule} does not allow ${JSON.stringify(command)}`, async () => {
      expect((await decide('ask', command, [rule]))?.behavior).toBe('ask');
    });
  }
  for (const [rule, command] of [
    ['bash(git diff:*)', 'git diff --stat'],
    ['bash(find:*)', 'find src -name "*.txt"'],
    ['bash(sed:*)', "sed -n 's/a/b/p' src/a.txt"],
    ['bash(sed:*)', "sed -e 's/hello/world/g;s/wrong/right/' src/a.txt"],
    ['bash(printf:*)', 'printf "%s\\n" hello'],
    ['bash(cat:*)', 'cat src/a.txt'],
    ['bash(npm test)', 'npm test'],
    ['bash(git:*)', 'git -C src status'],
    ['bash(awk:*)', "awk '{ print $1 }' src/a.txt"],
    ['bash(touch ok.txt)', 'touch ok.txt'],
    ['bash(cp:*)', 'cp src/a.txt b.txt'],
    ['bash(tee:*)', 'tee out.txt'],
    ['bash(rm:*)', 'rm -f src/a.txt.bak'],
  ] as Array<[string, string]>) {
    it(`${rule} still allows ${JSON.stringify(command)}`, async () => {
      expect((await decide('ask', command, [rule]))?.behavior).toBe('allow');
    });
  }
  it('a workdir outside the project is asked even when the rule allows the command', async () => {
    expect(await decide('ask', 'npm test', ['bash(npm test)'], [], outside)).toEqual({ behavior: 'ask', reason: expect.stringContaining('outside the project') });
    expect((await decide('ask', 'npm test', ['bash(npm test)'], [], 'src'))?.behavior).toBe('allow');
  });
});

/** Writes that land on the settings surface: asked even in auto mode. */
const PROTECTED_WRITES = [
  'echo x > .git/hooks/pre-commit',
  'cd .git/hooks && echo x > pre-commit',
  'cd .git && cd hooks && cp /etc/hostname pre-commit',
  'pushd .git/hooks; touch pre-commit',
  'tee -a .git/config < /dev/null',
  'cp /etc/hostname .git/hooks/post-checkout',
  'cp /etc/hostname .git/hooks',
  'mv src/a.txt .git/hooks/pre-push',
  'ln -sf /tmp/x .git/hooks/pre-commit',
  'install -m 755 src/a.txt .git/hooks/pre-commit',
  'sed -i s/a/b/ .git/config',
  'perl -pi -e s/a/b/ .git/config',
  'git config core.hooksPath /tmp',
  'git config --global alias.st "!touch x"',
  'git -C src config core.pager "touch x"',
  'python3 -c "open(\'.git/hooks/pre-commit\', \'w\').write(\'x\')"',
  'node -e "require(\'fs\').writeFileSync(\'agent.config.ts\', \'x\')"',
  "python3 - <<'EOF'\nopen('.git/config', 'a').write('x')\nEOF",
  'echo x >> ~/.bashrc',
  'echo x >> "$HOME/.bashrc"',
  'echo x >> ${HOME}/.profile',
  'cp src/a.txt ~/.bashrc',
  'dd if=src/a.txt of=.git/config',
  'touch agent.config.ts',
  'truncate -s 0 .git/config',
  'chmod +x .git/hooks/pre-commit',
  'tar -xf a.tar -C .git/hooks',
  'tar xf a.tar',
  'unzip a.zip -d .git',
  'curl -o .git/hooks/pre-commit http://127.0.0.1/x',
  'wget -O .git/hooks/pre-commit http://127.0.0.1/x',
  'sort -o .git/config src/a.txt',
  'git diff --output=.git/hooks/pre-commit',
  'rsync -a src/ .git/hooks/',
  'find src -fprint .git/hooks/pre-commit',
  'echo x > .git/hooks/pre-commit.sample && mv .git/hooks/pre-commit.sample .git/hooks/pre-commit',
  'rm -rf .git',
  'env FOO=1 cp src/a.txt .git/config',
  'sudo -u root tee .git/config < /dev/null',
  'echo x > $OUT',
  'cd $(echo .git) && echo x > config',
  'xargs rm < list.txt',
  'bash -c "echo x > .git/hooks/pre-commit"',
  'echo x | tee .git/hooks/pre-commit',
  'cd - && echo x > config',
  'find . -execdir cp /etc/hostname pre-commit ;',
  "bash <<'EOF'\necho x > .git/config\nEOF",
  "trap 'echo x > .git/config' EXIT",
  'env -S "cp /etc/hostname .git/config"',
  'watch -n 1 "cp /etc/hostname .git/config"',
  'gunzip ~/.bashrc.gz',
  'git archive -o .git/hooks/pre-commit HEAD',
  'split -l 1 src/a.txt .git/hooks/x',
  'cp -r src/. .git/hooks',
  'rsync -a src/ ~/',
]

describe('writes to protected paths are asked in auto mode, however the command names them', () => {
  for (const command of PROTECTED_WRITES) {
    it(JSON.stringify(command), async () => {
      expect((await decide('auto', command))?.behavior).toBe('ask');
    });
  }
  it('a workdir inside .git resolves relative writes there', async () => {
    expect((await decide('auto', 'echo x > pre-commit', [], [], '.git/hooks'))?.behavior).toBe('ask');
  });
  for (const command of ['echo x > out.txt', 'cp src/a.txt b.txt', 'sed -i s/a/b/ src/a.txt', 'rm -rf build dist', 'cd src && touch new.txt', 'git config --get user.name', 'tar -cf out.tar src', 'python3 -c "print(1)"']) {
    it(`ordinary work still runs in auto mode: ${JSON.stringify(command)}`, async () => {
      expect((await decide('auto', command))?.behavior).toBe('allow');
    });
  }
});

describe('deny rules hold after resolving wrappers, program paths and file paths', () => {
  const RM = ['/bin/rm -f src/a.txt', '\\rm src/a.txt', 'command rm src/a.txt', 'env -i rm src/a.txt', 'nice -n 5 rm src/a.txt', 'timeout -s KILL 5 rm src/a.txt', 'sudo -u root rm src/a.txt', 'xargs -I{} rm {} < list', 'find . -name x -exec rm {} ;', 'find . -exec /bin/rm {} +', 'stdbuf -oL rm x', 'busybox rm x'];
  for (const command of RM) {
    it(`bash(rm:*) denies ${JSON.stringify(command)}`, async () => {
      expect(await decide('auto', command, [], ['bash(rm:*)'])).toEqual({ behavior: 'deny', reason: expect.stringContaining('bash(rm:*)') });
    });
  }
  const ENV = ['cat .env', 'grep TOKEN .env', 'cat ./src/../.env', 'grep -r TOKEN .', 'rg TOKEN', 'cat .e*', 'cp .env /tmp/x', 'base64 < .env', 'python3 -c "print(open(\'.env\').read())"', 'tar -czf /tmp/x.tgz .', 'git diff --no-index .env README.md', 'curl -d @.env http://127.0.0.1/', 'cd src && cat ../.env'];
  for (const command of ENV) {
    it(`read_file(.env) denies ${JSON.stringify(command)}`, async () => {
      expect(await decide('auto', command, [], ['read_file(.env)'])).toEqual({ behavior: 'deny', reason: expect.stringContaining('read_file(.env)') });
    });
  }
  it('read_file(.env) asks about a computed path', async () => {
    expect((await decide('auto', 'cat $(echo .env)', [], ['read_file(.env)']))?.behavior).toBe('ask');
  });
  it('read_file(.env) leaves other reads alone', async () => {
    expect((await decide('auto', 'grep -r TOKEN src', [], ['read_file(.env)']))?.behavior).toBe('allow');
  });
  for (const command of ['rm secrets/key.txt', 'echo x > secrets/new.txt', 'cp src/a.txt secrets/', 'rm -rf .']) {
    it(`write_file(secrets/**) denies ${JSON.stringify(command)}`, async () => {
      expect((await decide('auto', command, [], ['write_file(secrets/**)']))?.behavior).toBe('deny');
    });
  }
});

describe('reads of protected secrets are asked in auto mode', () => {
  for (const command of ['cat ~/.ssh/id_rsa', 'grep -r KEY ~', 'cp ~/.ssh/id_rsa src/', 'tar -czf x.tgz ~/.ssh']) {
    it(JSON.stringify(command), async () => {
      expect((await decide('auto', command))?.behavior).toBe('ask');
    });
  }
});

describe('sedScriptEffects', () => {
  it('finds e, w, r and the s///e and s///w flags, and skips text inside regexes', () => {
    expect(sedScriptEffects('s/hello/world/g')).toEqual({ runs: false, writes: [], reads: [], unclear: false });
    expect(sedScriptEffects('1e id')).toMatchObject({ runs: true });
    expect(sedScriptEffects('s/x/id/e')).toMatchObject({ runs: true });
    expect(sedScriptEffects('/re/w out.txt')).toMatchObject({ writes: ['out.txt'] });
    expect(sedScriptEffects('s/a/b/w out.txt')).toMatchObject({ writes: ['out.txt'] });
    expect(sedScriptEffects('$r /etc/passwd')).toMatchObject({ reads: ['/etc/passwd'] });
    expect(sedScriptEffects('s|/w|/e|g;p')).toEqual({ runs: false, writes: [], reads: [], unclear: false });
    expect(sedScriptEffects('1,/x/{s/a/b/;d}')).toEqual({ runs: false, writes: [], reads: [], unclear: false });
  });
});
