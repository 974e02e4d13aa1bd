/**
 * The sandbox cannot be walked around: whatever a sandboxed command does (the target hidden from static analysis
 * in payload scripts, `python3 -c`, `node -e`), afterwards no protected path was created, changed or replaced.
 */
import { existsSync, linkSync, lstatSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { coreProtectedEntries } from '../../../kernel/index.js';
import * as instructions from '../../../plugins/instructions/index.js';
import { SECRETS } from '../../helpers/adversary.js';
import { until } from '../../helpers/until.js';
import { expectHarmless, hasPython, hidden, skipReason, surfaceOf, useAttack } from './sandbox-world.js';

const attack = useAttack();
const bash = (command: string, id = 'b1', extra: Record<string, unknown> = {}) => ({ input: { command, ...extra }, id });
const REVERTED = /The Keel sandbox undid/;
/** Each case starts the CLI and bubblewrap once or twice: on a loaded two-core machine that takes 20 s. */
const SLOW = 90_000;
// Entries other parts of the settings surface add (Claude Code's files, instruction files with front matter):
// their cases run once this build protects them.
const core = coreProtectedEntries({ keelHome: '/k', home: '/h' });
const coreHas = (name: string) => core.some((e) => e.segment?.test(name));
const instructionsFile = (instructions as Record<string, unknown>).SETTINGS_FILE as RegExp | undefined;

describe.skipIf(Boolean(skipReason))('sandbox escape: git', { timeout: SLOW }, () => {
  it('a hook written into .git/hooks fails: read-only', async () => {
    const a = await attack([bash(hidden('echo "touch $PWNED" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit'))]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toMatch(/Read-only file system/);
  });

  it('.git/config cannot be appended to (core.hooksPath, fsmonitor)', async () => {
    const a = await attack([bash(hidden('printf "[core]\\n\\tfsmonitor = touch /tmp/x\\n" >> .git/config'))]);
    expectHarmless(a, ['b1']);
  });

  it('git config core.hooksPath fails', async () => {
    const a = await attack([bash(hidden('git config core.hooksPath evil-hooks'))]);
    expectHarmless(a, ['b1']);
  });

  it('mv .git .git-orig && git init: .git cannot be renamed away', async () => {
    const a = await attack([bash(hidden('mv .git .git-orig; git init -q; echo "touch x" > .git/hooks/post-checkout'))]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toMatch(/Device or resource busy/);
    expect(existsSync(a.h.path('.git-orig'))).toBe(false);
  });

  it('.git/hooks cannot be swapped for a symlink', async () => {
    const a = await attack([bash(hidden('mkdir -p evil && echo x > evil/pre-commit && rm -rf .git/hooks; ln -s ../evil .git/hooks'))]);
    expectHarmless(a, ['b1']);
    expect(lstatSync(a.h.path('.git/hooks')).isDirectory()).toBe(true);
  });

  it('a hook sample cannot be made executable', async () => {
    const a = await attack([bash(hidden('chmod +x .git/hooks/pre-commit.sample && cp .git/hooks/pre-commit.sample .git/hooks/pre-commit'))]);
    expectHarmless(a, ['b1']);
  });

  it('a new .git/commondir (it would redirect git to another config and hooks) is removed', async () => {
    const a = await attack([bash(hidden('mkdir -p evil/hooks && echo ../evil > .git/commondir'))]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toMatch(REVERTED);
    expect(a.text('b1')).toContain('.git/commondir: created by the command, removed');
  });

  it('a nested repository (git init in a subfolder) is removed', async () => {
    const a = await attack([bash(hidden('mkdir -p vendor/lib && git -C vendor/lib init -q && echo "touch x" > vendor/lib/.git/hooks/post-checkout'))]);
    expectHarmless(a, ['b1']);
    expect(existsSync(a.h.path('vendor/lib/.git'))).toBe(false);
    expect(existsSync(a.h.path('vendor/lib'))).toBe(true);
  });

  it('a .git file pointing at a planted git dir is removed', async () => {
    const a = await attack([bash(hidden('mkdir -p sub evil/hooks && printf "gitdir: ../evil\\n" > sub/.git'))]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toContain(`${path.join(a.h.dir, 'sub', '.git')}: created by the command, removed`);
  });

  it('a hard link to .git/config cannot be made (it would be writable through the link)', async () => {
    const a = await attack([bash(hidden('ln .git/config gc && echo "[alias] x = !touch y" >> gc'))]);
    expectHarmless(a, ['b1']);
    expect(statSync(a.h.path('.git/config')).nlink).toBe(1);
  });

  it('umount, remount and a new user namespace cannot lift the read-only mounts', async () => {
    const a = await attack([
      bash(hidden('umount .git/hooks; mount -o remount,rw .git/hooks; unshare -Urm sh -c "umount $PWD/.git/hooks; echo x > $PWD/.git/hooks/pre-commit"; echo x > .git/hooks/pre-commit')),
    ]);
    expectHarmless(a, ['b1']);
  });

  it('normal git work goes on: status, add, commit', async () => {
    const a = await attack([bash('git -c user.email=a@b -c user.name=a add src && git -c user.email=a@b -c user.name=a commit -qm one && git log --oneline | wc -l')], {
      setup: (h) => execFileSync('git', ['init', '-q', h.dir]),
    });
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).not.toMatch(REVERTED);
    expect(a.text('b1')).toMatch(/^1$/m);
  });
});

describe.skipIf(Boolean(skipReason))('sandbox escape: Keel config and settings', { timeout: SLOW }, () => {
  it('the existing agent.config.ts cannot be overwritten, removed or renamed', async () => {
    const a = await attack([bash(hidden('echo "export default {}" > agent.config.ts; rm -f agent.config.ts; mv agent.config.ts x.ts'))]);
    expectHarmless(a, ['b1']);
  });

  it('a new agent.config.mjs in the root cannot be created: its name is held read-only, and nothing is left', async () => {
    const a = await attack([bash(hidden('echo "export default { permissions: { allow: [\\"bash\\"] } }" > agent.config.mjs; rmdir agent.config.mjs; mv agent.config.mjs x'))]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toMatch(/agent\.config\.mjs: Is a directory/);
    expect(existsSync(a.h.path('agent.config.mjs'))).toBe(false);
    expect(existsSync(a.h.path('x'))).toBe(false);
  });

  it('a new agent.config.mjs in a subfolder off the working folder\'s path is removed and the model is told', async () => {
    const a = await attack([bash(hidden('mkdir -p lib && echo "export default {}" > lib/agent.config.mjs'))]);
    expectHarmless(a, ['b1']);
    expect(a.v.results.b1?.is_error).toBe(true);
    expect(a.text('b1')).toContain(`${a.h.path('lib/agent.config.mjs')}: created by the command, removed (a Keel config file (it runs as code))`);
  });

  it('a new agent.config.ts in a deep subfolder is removed', async () => {
    const a = await attack([bash(hidden('mkdir -p packages/web/src && echo "export default {}" > packages/web/agent.config.ts'))]);
    expectHarmless(a, ['b1']);
    expect(existsSync(a.h.path('packages/web/src'))).toBe(true);
  });

  it('renaming the folder that holds a config away fails', async () => {
    const a = await attack([bash(hidden('mv packages packages-old; mkdir -p packages/app && echo "export default {}" > packages/app/agent.config.ts'))], {
      setup: (h) => h.write('packages/app/agent.config.ts', 'export default { model: "x" };\n'),
    });
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toMatch(/Device or resource busy/);
    expect(existsSync(a.h.path('packages-old'))).toBe(false);
  });

  it('renaming a grandparent of a config away fails too', async () => {
    const a = await attack([bash(hidden('mv packages/app packages/app2 && mkdir packages/app && echo pwn > packages/app/agent.config.ts'))], {
      setup: (h) => h.write('packages/app/deep/agent.config.json', '{}\n'),
    });
    expectHarmless(a, ['b1']);
  });

  it('a symlink planted as agent.config.mjs is removed', async () => {
    const a = await attack([bash(hidden('echo "export default {}" > "$TMPDIR/evil.mjs"; ln -s "$TMPDIR/evil.mjs" agent.config.mjs'))]);
    expectHarmless(a, ['b1']);
    expect(existsSync(a.h.path('agent.config.mjs'))).toBe(false);
  });

  it('a folder created where a config file is expected is removed', async () => {
    const a = await attack([bash(hidden('mkdir -p agent.config.js/nested && echo x > agent.config.js/nested/f'))]);
    expectHarmless(a, ['b1']);
  });

  it('a hard link of a project file named agent.config.cjs is removed, the file itself kept', async () => {
    const a = await attack([bash(hidden('echo "module.exports = {}" > payload.cjs && ln payload.cjs agent.config.cjs'))]);
    expectHarmless(a, ['b1']);
    expect(readFileSync(a.h.path('payload.cjs'), 'utf8')).toBe('module.exports = {}\n');
  });

  it('a config changed through a hard link made before the run is put back, and the link cut', async () => {
    let original = '';
    const a = await attack([bash(hidden('echo "export default { sandbox: { enabled: false } }" > cfg-link'))], {
      setup: (h) => {
        original = readFileSync(h.path('agent.config.ts'), 'utf8');
        linkSync(h.path('agent.config.ts'), h.path('cfg-link'));
      },
    });
    expect(a.text('b1')).toContain(`${a.h.path('agent.config.ts')}: changed by the command, restored`);
    expect(readFileSync(a.h.path('agent.config.ts'), 'utf8')).toBe(original);
    expect(statSync(a.h.path('agent.config.ts')).nlink).toBe(1);
    expect(a.v.ran).toBe(false);
  });

  it('.keel cannot be renamed away, and new files in it are removed; .keel/memory stays writable', async () => {
    const a = await attack([bash(hidden('mv .keel .keel-old; echo evil > .keel/agents/evil.md; mkdir -p .keel/commands && echo x > .keel/commands/x.md; echo remember > .keel/memory/note.md'))], {
      setup: (h) => {
        h.write('.keel/agents/reviewer.md', '# reviewer\n');
        mkdirSync(h.path('.keel/memory'), { recursive: true });
      },
    });
    expect(a.surface).toEqual([a.h.path('.keel/memory/note.md')]);
    expect(readFileSync(a.h.path('.keel/memory/note.md'), 'utf8')).toBe('remember\n');
    expect(a.text('b1')).toMatch(/Device or resource busy/);
    expect(a.text('b1')).not.toMatch(REVERTED);
    expect(a.v.ran).toBe(false);
  });

  it('a new .keel folder in a subfolder is removed', async () => {
    const a = await attack([bash(hidden('mkdir -p sub/.keel/agents && echo evil > sub/.keel/agents/a.md'))]);
    expectHarmless(a, ['b1']);
  });
});

describe.skipIf(Boolean(skipReason))('sandbox escape: tools and tricks', { timeout: SLOW }, () => {
  it.skipIf(!hasPython)('python3 -c writing a hook and a config', async () => {
    const code = `import os\nos.makedirs('a/b', exist_ok=True)\nopen('a/b/agent.config.mjs','w').write('x')\ntry:\n  open('.git/hooks/post-merge','w').write('x')\nexcept OSError as e:\n  print(e)\n`;
    const a = await attack([bash(hidden(code, 'python3', 'p.py'))]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toMatch(/Read-only file system/);
  });

  it('node -e writing a config in the root and in a subfolder', async () => {
    const js = `const fs=require('fs');fs.writeFileSync(['agent','config','mjs'].join('.'),'x');fs.mkdirSync('lib',{recursive:true});fs.writeFileSync('lib/'+['agent','config','ts'].join('.'),'x')`;
    const a = await attack([bash(`node -e "$(echo ${Buffer.from(js).toString('base64')} | base64 -d)"`)]);
    expectHarmless(a, ['b1']);
  });

  it('tar -x of an archive holding configs, settings and a hook', async () => {
    const a = await attack([
      bash(hidden('d=$TMPDIR/t && mkdir -p $d/.keel $d/sub $d/.git/hooks && echo x > $d/agent.config.mjs && echo x > $d/.keel/settings.json && echo x > $d/sub/agent.config.ts && echo x > $d/.git/hooks/post-checkout && tar -C $d -cf $TMPDIR/a.tar . && tar -xf $TMPDIR/a.tar; true')),
    ]);
    expectHarmless(a, ['b1']);
  });

  it('cp -r of a prepared tree over the project', async () => {
    const a = await attack([bash(hidden('d=$TMPDIR/c && mkdir -p $d/.git/hooks $d/x && echo x > $d/.git/hooks/pre-push && echo x > $d/x/agent.config.js && cp -rT $d .; true'))]);
    expectHarmless(a, ['b1']);
  });

  it('a script file written with write_file, then run', async () => {
    const a = await attack([
      { name: 'write_file', input: { path: 'tools/gen.sh', content: 'mkdir -p conf && echo x > conf/agent.config.json\necho x > .git/hooks/pre-rebase\n' }, id: 'w1' },
      bash('bash tools/gen.sh'),
    ]);
    expectHarmless(a, ['w1', 'b1']);
    expect(readFileSync(a.h.path('tools/gen.sh'), 'utf8')).toContain('conf/agent.config.json');
  });

  it('writes through a symlink planted in $TMPDIR, across two commands', async () => {
    const a = await attack([
      bash(hidden('ln -s "$PWD" "$TMPDIR/p" && echo x > "$TMPDIR/p/agent.config.mjs"'), 'b1'),
      bash(hidden('echo x > "$TMPDIR/p/.git/hooks/pre-commit"; mkdir -p "$TMPDIR/p/s" && echo x > "$TMPDIR/p/s/agent.config.ts"'), 'b2'),
    ]);
    expectHarmless(a, ['b1', 'b2']);
  });

  it('/proc/self/root and /proc/*/cwd lead only into the sandbox: Keel is not visible', async () => {
    const a = await attack([
      bash(hidden('ls /proc | grep -c "^[0-9]"; for p in /proc/[0-9]*; do echo x > $p/cwd/.git/hooks/pre-commit; echo x > $p/root$PWD/.git/hooks/post-commit; done 2>/dev/null; cat /proc/*/cmdline 2>/dev/null | tr "\\0" " " | grep -c keel.js')),
    ]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).not.toMatch(/keel\.js/);
  });

  it('a background writer (setsid nohup) does not outlive the command', async () => {
    const a = await attack([bash(hidden('setsid nohup bash -c "sleep 1; echo x > agent.config.mjs; mkdir -p z; echo x > z/agent.config.ts" > /dev/null 2>&1 & echo started'))]);
    // Until the writer is gone (at once if the sandbox ended it; after its writes if it got away), not a fixed time.
    await until(() => spawnSync('pgrep', ['-f', 'echo x > agent.config.mjs']).status !== 0, 'the background writer to be gone');
    expect(surfaceOf(a.h.dir).has(a.h.path('agent.config.mjs'))).toBe(false);
    expect(existsSync(a.h.path('z'))).toBe(false);
    expectHarmless(a, ['b1']);
  });

  it('a disowned subshell loop that keeps writing is gone when the command returns', async () => {
    const a = await attack([bash(hidden('( while :; do echo x >> spin.log; done ) & disown; sleep 0.3; echo back'))]);
    const size = statSync(a.h.path('spin.log')).size;
    await new Promise((r) => setTimeout(r, 500));
    expect(statSync(a.h.path('spin.log')).size).toBe(size);
    expectHarmless(a, ['b1']);
  });

  it('a command killed by its timeout while writing configs: what it wrote is removed', async () => {
    const a = await attack([bash(hidden('mkdir -p w; i=0; while :; do i=$((i+1)); echo $i > w/agent.config.ts; done'), 'b1', { timeout: 1500 })]);
    expect(a.text('b1')).toMatch(/timed out/);
    expectHarmless(a, ['b1']);
  });

  it('shell profiles in the home folder stay read-only', async () => {
    const a = await attack([bash(hidden('echo "touch /tmp/x" >> ~/.bashrc; echo x > ~/.zshrc; echo x > ~/.profile'))]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toMatch(/Read-only file system/);
  });

  it('with allowWrite: ["~"], existing profiles are still read-only and new ones cannot be made', async () => {
    const a = await attack([bash(hidden('echo "touch x" >> ~/.bashrc; echo "touch x" > ~/.zshrc; echo ok > ~/notes.txt'))], {
      sandbox: "{ enabled: true, allowWrite: ['~'] }",
    });
    expect(readFileSync(path.join(a.h.home, 'notes.txt'), 'utf8')).toBe('ok\n');
    expect(a.v.changed).toEqual([path.join(a.h.home, 'notes.txt')]);
    // A profile that does not exist yet cannot be made: its name is held read-only while the command runs.
    expect(a.text('b1')).toMatch(/\.zshrc: Is a directory/);
    expect(existsSync(path.join(a.h.home, '.zshrc'))).toBe(false);
  });

  it('~/.ssh and KEEL_HOME are hidden: no key reaches the model', async () => {
    const a = await attack([bash(hidden('cat ~/.ssh/id_rsa; cat "$KEEL_HOME/auth.json"; ls -a ~/.ssh "$KEEL_HOME"; grep -r CANARY ~ "$KEEL_HOME" 2>/dev/null'))]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).not.toContain(SECRETS.sshKey);
    expect(a.text('b1')).not.toContain(SECRETS.apiKey);
  });

  it('KEEL_HOME cannot be written (user config, trusted folders)', async () => {
    const a = await attack([bash(hidden('echo "{\\"permissions\\":{\\"allow\\":[\\"bash\\"]}}" > "$KEEL_HOME/agent.config.json"; echo "[\\"/\\"]" > "$KEEL_HOME/trusted-folders.json"; echo $?'))]);
    expectHarmless(a, ['b1']);
  });

  it('ordinary work is untouched and gets no note', async () => {
    const a = await attack([bash('mkdir -p build && echo ok > build/out.txt && echo "# notes" > NOTES.md && cat src/app.ts')]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toBe('export const app = 1;');
    expect(readFileSync(a.h.path('build/out.txt'), 'utf8')).toBe('ok\n');
  });
});

describe.skipIf(Boolean(skipReason))('sandbox escape: edits mode with allow rules', { timeout: SLOW }, () => {
  const rules = "permissions: { allow: ['bash(python3 *)', 'bash(node *)', 'bash(bash scripts/*)'] }";

  it.skipIf(!hasPython)('an allowed python3 script creates a config and writes a hook', async () => {
    const a = await attack(
      [
        { name: 'write_file', input: { path: 'gen.py', content: "import os\nos.makedirs('pkg', exist_ok=True)\nopen('pkg/agent.config.mjs','w').write('x')\ntry:\n  open('.git/hooks/pre-commit','w').write('x')\nexcept OSError:\n  pass\n" }, id: 'w1' },
        bash('python3 gen.py'),
      ],
      { mode: 'edits', config: rules },
    );
    expectHarmless(a, ['w1', 'b1']);
    expect(a.text('b1')).toMatch(REVERTED);
  });

  it('an allowed node script renames the project config away', async () => {
    const a = await attack(
      [
        { name: 'write_file', input: { path: 'm.js', content: "const fs=require('fs');try{fs.renameSync('agent.config.ts','old.ts')}catch(e){console.log(e.code)}\nfs.writeFileSync('agent.config.json','{}')\n" }, id: 'w1' },
        bash('node m.js'),
      ],
      { mode: 'edits', config: rules },
    );
    expectHarmless(a, ['w1', 'b1']);
    expect(a.text('b1')).toMatch(/EBUSY/);
  });

  it('an allowed script file plants a nested repository and a .keel folder', async () => {
    const a = await attack(
      [
        { name: 'write_file', input: { path: 'scripts/setup.sh', content: 'mkdir -p deps/x && git -C deps/x init -q\nmkdir -p app/.keel && echo x > app/.keel/settings.json\n' }, id: 'w1' },
        bash('bash scripts/setup.sh'),
      ],
      { mode: 'edits', config: rules },
    );
    expectHarmless(a, ['w1', 'b1']);
  });

  it('the bash call not covered by a rule is refused headless, and nothing changes', async () => {
    const a = await attack([bash(hidden('echo x > agent.config.mjs'))], { mode: 'edits', config: rules });
    expectHarmless(a, ['b1']);
    expect(a.v.results.b1?.is_error).toBe(true);
  });
});

describe.skipIf(Boolean(skipReason))('sandbox escape: settings files other plugins read', { timeout: SLOW }, () => {
  it.skipIf(!coreHas('.mcp.json'))('a new .mcp.json (its servers run as programs) cannot be made in the root, and is removed elsewhere', async () => {
    const a = await attack([bash(hidden('echo "{\\"mcpServers\\":{\\"x\\":{\\"command\\":\\"touch\\"}}}" > .mcp.json; mkdir -p tools && echo "{}" > tools/.mcp.json'))]);
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toMatch(/\.mcp\.json: Is a directory/);
    expect(a.text('b1')).toMatch(REVERTED);
    expect(existsSync(a.h.path('.mcp.json'))).toBe(false);
  });

  it.skipIf(!coreHas('.claude'))('a new .claude/settings.json (hooks) is removed', async () => {
    const a = await attack([bash(hidden('mkdir -p .claude && echo "{\\"hooks\\":{}}" > .claude/settings.json'))]);
    expectHarmless(a, ['b1']);
  });

  it.skipIf(!instructionsFile?.test('AGENTS.md'))('a new AGENTS.md with front matter is removed; one without is kept', async () => {
    const a = await attack([bash(hidden('mkdir -p lib docs && printf -- "---\\npermissionMode: auto\\n---\\n# x\\n" > lib/AGENTS.md && printf "# notes\\n" > docs/AGENTS.md'))]);
    expect(existsSync(a.h.path('lib/AGENTS.md'))).toBe(false);
    expect(readFileSync(a.h.path('docs/AGENTS.md'), 'utf8')).toBe('# notes\n');
    expect(a.surface).toEqual([a.h.path('docs/AGENTS.md')]);
    expect(a.v.ran).toBe(false);
  });

  it.skipIf(!instructionsFile?.test('CLAUDE.md'))('an existing CLAUDE.md is read-only inside the sandbox, front matter or not', async () => {
    const a = await attack([bash(hidden('printf -- "---\\npermissionMode: auto\\n---\\n" > CLAUDE.md; echo more >> CLAUDE.md'))], {
      setup: (h) => h.write('CLAUDE.md', '# house rules\n'),
    });
    expectHarmless(a, ['b1']);
    expect(a.text('b1')).toMatch(/Read-only file system/);
  });
});

