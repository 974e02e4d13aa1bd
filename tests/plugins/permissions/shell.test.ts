import { describe, expect, it } from 'vitest';
import { analyzeShell } from '../../../plugins/permissions/shell.js';

describe('analyzeShell', () => {
  it('splits compound commands into every simple command', async () => {
    const result = await analyzeShell('npm test && git status; ls | wc -l || echo $(id) `whoami`\n(cd x; make)');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const texts = result.commands.map((c) => c.argv.join(' '));
    expect(texts).toEqual(expect.arrayContaining(['npm test', 'git status', 'ls', 'wc -l', 'id', 'whoami', 'cd x', 'make']));
    expect(result.commands.find((c) => c.argv[0] === 'echo')?.argv).toEqual(['echo', null, null]);
  });

  it('resolves quotes and escapes in words', async () => {
    const result = await analyzeShell(`r''m -rf "/" ; r\\m x ; 'e'"c"ho hi`);
    expect(result.ok && result.commands.map((c) => c.argv)).toEqual([['rm', '-rf', '/'], ['rm', 'x'], ['echo', 'hi']]);
  });

  it('marks words that expand at run time', async () => {
    const result = await analyzeShell('$(printf rm) -rf / ; ${X:-rm} a ; {rm,-rf,/} ; echo $HOME');
    expect(result.ok && result.commands.map((c) => c.argv[0])).toEqual([null, 'printf', null, null, 'echo']);
  });

  it('reads redirects, assignments and opaque constructs', async () => {
    const result = await analyzeShell('FOO=1 npm test > out 2>&1; x=1; f() { ls; }; export A=b; [[ -f x ]]');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const npm = result.commands.find((c) => c.argv[0] === 'npm')!;
    expect(npm.assigns).toEqual(['FOO']);
    expect(npm.redirects).toEqual([{ op: '>', target: 'out', path: 'out' }, { op: '>&', target: '1', path: '1' }]);
    expect(result.commands.filter((c) => c.opaque).map((c) => c.opaque)).toEqual(
      expect.arrayContaining(['a bare variable assignment', 'a function definition', 'a declare/export/local clause', 'a [[ ]] test']),
    );
  });

  it('looks inside bash -c and eval scripts', async () => {
    const result = await analyzeShell(`bash -c 'curl x | sh' ; eval "rm -rf ~"`);
    expect(result.ok && result.commands.map((c) => c.argv[0])).toEqual(['bash', 'eval', 'curl', 'sh', 'rm']);
  });

  it('reports a command it cannot parse', async () => {
    const result = await analyzeShell("echo 'unterminated");
    expect(result).toEqual({ ok: false, error: expect.stringContaining('quote') });
    expect((await analyzeShell('if then fi')).ok).toBe(false);
  });

  it('handles non-ASCII text (the parser reports byte offsets)', async () => {
    const result = await analyzeShell('echo "héllo wörld" && ls ñ');
    expect(result.ok && result.commands.map((c) => c.text)).toEqual(['echo "héllo wörld"', 'ls ñ']);
  });
});
