/**
 * Class 4: an allow rule matches a command's text, never what its own flags turn it into. Each attack would
 * write a protected or outside file, run code (the PWNED marker) or leak a canary if the rule vouched for it;
 * in ask and edits modes it must be asked, so a headless run refuses it and nothing happens.
 */
import { describe, expect, it } from 'vitest';

/** One CLI run per case; the machine is shared and busy, so a run may take a while. */
const RUN = { timeout: 90_000 };
import { useHostile } from '../../helpers/adversary.js';
import { evilTar, expectRefused, outsideFile, realRepo, runAttack, type Attack } from './shell-attack.js';

const hostile = useHostile();

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const ATTACKS: Attack[] = [
  { name: 'git diff --output overwrites ~/.bashrc', mode: 'ask', allow: ['bash(git diff:*)'], setup: realRepo, command: (h) => `git diff --output=${h.home}/.bashrc` },
  { name: 'git diff --output (edits mode) overwrites ~/.profile', mode: 'edits', allow: ['bash(git diff:*)'], setup: realRepo, command: (h) => `git diff --output ${h.home}/.profile` },
  { name: 'git diff --output plants a git hook', mode: 'ask', allow: ['bash(git diff:*)'], setup: realRepo, command: () => 'git diff --output=.git/hooks/pre-commit' },
  { name: 'git diff --output writes outside the project', mode: 'ask', allow: ['bash(git diff:*)'], setup: realRepo, command: (h) => `git diff --output=${h.outside}/stolen.diff` },
  { name: 'git diff --no-index reads an outside secret', mode: 'ask', allow: ['bash(git diff:*)'], setup: realRepo, command: (h) => `git diff --no-index ${h.outside}/secret.txt README.md` },
  { name: 'git diff --no-index reads ~/.ssh/id_rsa', mode: 'edits', allow: ['bash(git diff:*)'], setup: realRepo, command: () => 'git diff --no-index ~/.ssh/id_rsa README.md' },
  { name: 'git -c alias runs a shell command', mode: 'ask', allow: ['bash(git:*)'], setup: realRepo, command: (h) => `git -c alias.x=${q(`!touch ${h.pwned}`)} x` },
  { name: 'git -C runs git in an outside folder', mode: 'ask', allow: ['bash(git:*)'], command: (h) => `git -C ${h.outside} init -q` },
  { name: 'printf -v with a subscript runs a command', mode: 'ask', allow: ['bash(printf:*)'], command: (h) => `printf -v ${q(`a[$(touch ${h.pwned})]`)} %s x` },
  { name: 'printf -v with a backquoted subscript runs a command', mode: 'edits', allow: ['bash(printf:*)'], command: (h) => `printf -v ${q(`a[\`touch ${h.pwned}\`]`)} %s x` },
  { name: 'read into a subscript runs a command', mode: 'ask', allow: ['bash(read:*)'], command: (h) => `read ${q(`a[$(touch ${h.pwned})]`)} <<< x` },
  { name: 'npm test with a workdir outside the project runs its script', mode: 'ask', allow: ['bash(npm test)'], setup: (h) => outsideFile(h, 'package.json', JSON.stringify({ scripts: { test: `touch ${h.pwned}` } })), command: () => 'npm test', workdir: (h) => h.outside },
  { name: 'cd outside then npm test runs its script', mode: 'ask', allow: ['bash(npm test)'], setup: (h) => outsideFile(h, 'package.json', JSON.stringify({ scripts: { test: `touch ${h.pwned}` } })), command: (h) => `cd ${h.outside} && npm test` },
  { name: 'find -exec runs a program', mode: 'ask', allow: ['bash(find:*)'], command: (h) => `find . -maxdepth 0 -exec touch ${h.pwned} \\;` },
  { name: 'find -execdir runs a program', mode: 'edits', allow: ['bash(find:*)'], command: (h) => `find . -maxdepth 0 -execdir touch ${h.pwned} \\;` },
  { name: 'find -delete removes an outside file', mode: 'ask', allow: ['bash(find:*)'], command: (h) => `find ${h.outside} -name secret.txt -delete` },
  { name: 'find -fprint overwrites ~/.bashrc', mode: 'ask', allow: ['bash(find:*)'], command: (h) => `find . -maxdepth 0 -fprint ${h.home}/.bashrc` },
  { name: 'sed -i rewrites ~/.bashrc', mode: 'ask', allow: ['bash(sed:*)'], command: (h) => `sed -i ${q(`$a touch ${h.pwned}`)} ${h.home}/.bashrc` },
  { name: 'sed e command runs a program', mode: 'ask', allow: ['bash(sed:*)'], command: (h) => `sed -n ${q(`1e touch ${h.pwned}`)} README.md` },
  { name: 'sed s///e runs the pattern space', mode: 'edits', allow: ['bash(sed:*)'], command: (h) => `sed ${q(`s/.*/touch ${h.pwned.replace(/\//g, '\\/')}/e`)} README.md` },
  { name: 'sed w writes ~/.bashrc', mode: 'ask', allow: ['bash(sed:*)'], command: (h) => `sed -n ${q(`w ${h.home}/.bashrc`)} README.md` },
  { name: 'sed r reads an outside secret', mode: 'ask', allow: ['bash(sed:*)'], command: (h) => `sed ${q(`1r ${h.outside}/secret.txt`)} README.md` },
  { name: 'awk system() runs a program', mode: 'ask', allow: ['bash(awk:*)'], command: (h) => `awk ${q(`BEGIN { system("touch ${h.pwned}") }`)}` },
  { name: 'awk print > writes ~/.bashrc', mode: 'ask', allow: ['bash(awk:*)'], command: (h) => `awk ${q(`{ print > "${h.home}/.bashrc" }`)} README.md` },
  { name: 'perl -e runs code', mode: 'ask', allow: ['bash(perl:*)'], command: (h) => `perl -e ${q(`system("touch ${h.pwned}")`)}` },
  { name: 'perl -pi rewrites ~/.bashrc', mode: 'edits', allow: ['bash(perl:*)'], command: (h) => `perl -pi -e ${q('s/^/x/')} ${h.home}/.bashrc` },
  { name: 'python3 -c runs code', mode: 'ask', allow: ['bash(python3:*)'], command: (h) => `python3 -c ${q(`import os; os.system("touch ${h.pwned}")`)}` },
  { name: 'node -e runs code', mode: 'ask', allow: ['bash(node:*)'], command: (h) => `node -e ${q(`require("fs").writeFileSync("${h.pwned}", "x")`)}` },
  { name: 'sort -o overwrites ~/.bashrc', mode: 'ask', allow: ['bash(sort:*)'], command: (h) => `sort -o ${h.home}/.bashrc README.md` },
  { name: 'tar --checkpoint-action=exec runs a program', mode: 'ask', allow: ['bash(tar:*)'], command: (h) => `tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec=${q(`touch ${h.pwned}`)} README.md` },
  { name: 'tar -x -C drops a profile into HOME', mode: 'ask', allow: ['bash(tar:*)'], setup: (h) => evilTar(h, '.bashrc'), command: (h) => `tar -xf evil.tar -C ${h.home}` },
  { name: 'xargs runs a program', mode: 'ask', allow: ['bash(xargs:*)'], command: (h) => `xargs -I{} touch ${h.pwned} < README.md` },
  { name: 'env -S runs a command line', mode: 'ask', allow: ['bash(env:*)'], command: (h) => `env -S ${q(`touch ${h.pwned}`)}` },
  { name: 'curl -o overwrites ~/.bashrc', mode: 'ask', allow: ['bash(curl:*)'], command: (h) => `curl -s -o ${h.home}/.bashrc ${h.server.url}/v1/models` },
  { name: 'tee overwrites ~/.bashrc', mode: 'ask', allow: ['bash(tee:*)'], command: (h) => `tee ${h.home}/.bashrc < README.md` },
  { name: 'dd of= overwrites ~/.bashrc', mode: 'edits', allow: ['bash(dd:*)'], command: (h) => `dd if=README.md of=${h.home}/.bashrc` },
  { name: 'cat of an outside secret', mode: 'ask', allow: ['bash(cat:*)'], command: (h) => `cat ${h.outside}/secret.txt` },
  { name: 'cat through .. of an outside secret', mode: 'ask', allow: ['bash(cat:*)'], command: () => 'cat ../outside/secret.txt' },
  { name: 'cp of an outside secret into the project', mode: 'ask', allow: ['bash(cp:*)', 'bash(cat:*)'], command: (h) => `cp ${h.outside}/secret.txt stolen.txt && cat stolen.txt` },
  { name: 'uniq writes its second operand', mode: 'ask', allow: ['bash(uniq:*)'], command: (h) => `uniq README.md ${h.home}/.bashrc` },
];

describe('class 4: flags that write, run or read outside need their own permission', () => {
  it('has the corpus size the brief asks for', () => expect(ATTACKS.length).toBeGreaterThanOrEqual(35));
  for (const attack of ATTACKS) {
    it(`${attack.mode}, ${attack.allow?.join(' ')}: ${attack.name}`, RUN, async () => {
      expectRefused(await runAttack(hostile, attack));
    });
  }
});

describe('the same rules still allow the plain commands', () => {
  const PLAIN: Attack[] = [
    { name: 'git diff --stat', mode: 'ask', allow: ['bash(git diff:*)'], setup: realRepo, command: () => 'git diff --stat' },
    { name: 'find . -name', mode: 'ask', allow: ['bash(find:*)'], command: () => 'find . -name README.md' },
    { name: "sed -n 's/…/…/p'", mode: 'ask', allow: ['bash(sed:*)'], command: () => "sed -n 's/victim/VICTIM/p' README.md" },
    { name: 'printf', mode: 'ask', allow: ['bash(printf:*)'], command: () => "printf '%s\\n' hello" },
  ];
  for (const attack of PLAIN) {
    it(attack.name, RUN, async () => {
      const outcome = await runAttack(hostile, attack);
      expect(outcome.isError, outcome.text).toBe(false);
      expect(outcome.verdict).toMatchObject({ changed: [], ran: false, leaked: [] });
    });
  }
});
