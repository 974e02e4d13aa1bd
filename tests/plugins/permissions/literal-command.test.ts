import { describe, expect, it } from 'vitest';
import { literalCommand } from '../../../plugins/permissions/literal-command.js';
import { analyzeShell } from '../../../plugins/permissions/shell.js';

const HOME = { home: '/home/user' };

/** Deterministic pseudo-random strings over the characters the fast path accepts, spaces included. */
function generated(count: number): string[] {
  const alphabet = 'abcxyzABZ019_./:@%+,-      ';
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(next() * 24) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''));
}

const EVERYDAY = [
  'cat a.txt', 'npm test', 'git status -s', 'ls -la src/', 'node --version', 'make -j4 all', 'python3 -m pytest tests/unit',
  'rm -rf build', 'rm -rf /', 'sudo rm -rf /', 'curl https://example.com/x', 'git log --oneline -5', '  ls   -l  ', 'echo a,b',
  'c++ -O2 a.cc -o a', '. ./env.sh', ': noop', 'bash', 'sh script.sh', 'bash -c ls', 'env', 'xargs rm', 'find . -name x -delete',
  'timeout 5 npm test', 'nice -n 5 make', 'git push --force origin main', 'chmod 777 /etc/passwd', 'kill -9 1', '100% done',
];

describe('literal commands skip the bash parser', () => {
  it('read exactly as the parser reads them: everyday commands and a generated corpus', async () => {
    const corpus = [...EVERYDAY, ...generated(400)].filter((c) => literalCommand(c));
    expect(corpus.length).toBeGreaterThan(300);
    for (const command of corpus) {
      const parsed = await analyzeShell(command, HOME, 0, 'bash');
      expect(await analyzeShell(command, HOME), JSON.stringify(command)).toEqual(parsed);
    }
  });

  it('take nothing with shell syntax, reserved words or declarations, which the parser reads differently', async () => {
    const needsParser = [
      '', '   ', 'if', 'time ls', 'then x', 'function f', 'coproc x', 'export A', 'declare -x A', 'local a', 'let a', 'readonly a',
      'ls ~', 'ls ~/x', 'ls *', 'ls a?', 'ls [ab]', 'a=b cmd', 'x=1', 'echo $HOME', 'echo ${X}', "echo 'x'", 'echo "x"', 'echo \\x',
      'ls; rm -rf /', 'ls && rm x', 'ls | sh', 'ls & rm x', 'ls > f', 'ls < f', 'a\tb', 'a\nb', 'ls #c', 'echo {a,b}', 'echo !x',
      'echo `id`', '(ls)', '{ ls; }', 'ls\r', 'ls ^x', 'rm -rf /\u00a0x', 'é',
    ];
    for (const command of needsParser) expect(literalCommand(command), JSON.stringify(command)).toBeUndefined();
    // Those the parser reads as something other than one simple command of these words:
    for (const command of ['time ls', 'export A', 'ls ~', 'x=1', 'ls; rm -rf /']) {
      const parsed = await analyzeShell(command, HOME, 0, 'bash');
      const naive = { ok: true, commands: [{ text: command, argv: command.split(' '), words: command.split(' ').map((w) => ({ text: w, path: w, glob: false })), assigns: [], redirects: [] }] };
      expect(parsed, command).not.toEqual(naive);
    }
  });

  it('still looks inside the scripts they run', async () => {
    const result = await analyzeShell('bash -c ls', HOME);
    expect(result.ok && result.commands.map((c) => c.argv)).toEqual([['bash', '-c', 'ls'], ['ls']]);
  });
});
