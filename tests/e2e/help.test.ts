/**
 * `keel --help` from the registries: every sub-command and flag, the plugins' with their plugin (also a plugin the
 * user's config adds), `keel <sub> --help` printing that sub-command's help instead of running it, and the fast
 * path's text being the same help, generated at build time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KEEL_BIN, runKeel } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());
const env = (extra: Record<string, string> = {}) => ({ KEEL_HOME: ws.home, HOME: ws.home, ...extra });

/** A plugin in the user's config that adds a flag and a sub-command. */
const SHOUTER = `import { defineConfig, definePlugin } from 'keel';
const shouter = definePlugin(() => ({
  name: 'shouter',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.flags.register({ name: 'shout', value: '<word>', description: 'say it louder', modes: ['headless'] });
    kernel.subcommands.register({ name: 'greet', description: 'say hello', options: [['--loud', 'in capitals']], async run(args, { io }) { io.stdout.write(args.includes('--loud') ? 'HELLO\\n' : 'hello\\n'); return 0; } });
  },
}));
export default defineConfig({ plugins: [shouter()] });
`;

describe('keel --help', () => {
  it('lists every built-in and plugin sub-command and flag with its plugin; the fast path prints the same text', async () => {
    ws = makeWorkspace({ git: true });
    const fast = await runKeel(['--help'], { cwd: ws.dir, env: env() });
    expect(fast.code).toBe(0);
    const full = await runKeel(['--help'], { cwd: ws.dir, env: env({ KEEL_NO_FAST_PATH: '1' }) });
    expect(full.code).toBe(0);
    expect(fast.stdout).toBe(full.stdout);
    expect(fast.stdout).toBe(readFileSync(path.resolve(path.dirname(KEEL_BIN), '..', 'dist', 'fast-path', 'help'), 'utf8'));
    for (const [name, plugin] of [['doctor', 'inspect'], ['config', 'inspect'], ['plugins', 'inspect'], ['init', 'inspect'], ['mcp', 'mcp-bridge'], ['login', 'query-anthropic']]) {
      expect(full.stdout).toMatch(new RegExp(`\\n  ${name} .*\\[${plugin}\\]\\n`));
    }
    for (const name of ['describe', 'trust', 'sessions', 'help']) expect(full.stdout).toMatch(new RegExp(`\\n  ${name}\\b`));
    expect(full.stdout).toMatch(/--permission-prompt-tool <tool> +stdio: .*\[sdk; modes: sdk\]\n/);
    expect(full.stdout).toMatch(/--allowedTools, --allowed-tools <rules> .*\[claude-compat\]/);
    expect(full.stdout).toMatch(/-p, --print +headless/);
  });

  it('keel <sub> --help prints the sub-command’s help instead of running it', async () => {
    ws = makeWorkspace({ git: true });
    const doctor = await runKeel(['doctor', '--help'], { cwd: ws.dir, env: env() });
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/^Usage: keel doctor\n\ncheck Node, auth, config/);
    expect(doctor.stdout).toContain('From the inspect plugin.');
    expect(doctor.stdout).not.toMatch(/FAIL|ok\s+node/i);
    const config = await runKeel(['config', '-h'], { cwd: ws.dir, env: env() });
    expect(config.stdout).toMatch(/Options:\n {2}--json {2}print it as JSON\n/);
    const mcp = await runKeel(['help', 'mcp'], { cwd: ws.dir, env: env() });
    expect(mcp.stdout).toMatch(/^Usage: keel mcp list \| get <name>/);
    const sessions = await runKeel(['sessions', '--help'], { cwd: ws.dir, env: env() });
    expect(sessions.code).toBe(0);
    expect(sessions.stdout).toMatch(/Usage: keel sessions \[options\]/);
  });

  it("lists the flag and sub-command a plugin of the user's config adds, parses the flag and runs the sub-command", async () => {
    ws = makeWorkspace({ git: true });
    writeFileSync(path.join(ws.home, 'agent.config.ts'), SHOUTER);
    const help = await runKeel(['help'], { cwd: ws.dir, env: env() });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--shout <word> +say it louder \[shouter; modes: headless\]\n/);
    expect(help.stdout).toMatch(/\n {2}greet +say hello \[shouter\]\n/);
    const greet = await runKeel(['greet', '--loud'], { cwd: ws.dir, env: env() });
    expect(greet.stdout).toBe('HELLO\n');
    const greetHelp = await runKeel(['greet', '--help'], { cwd: ws.dir, env: env() });
    expect(greetHelp.stdout).toBe('Usage: keel greet\n\nsay hello\n\nOptions:\n  --loud  in capitals\n\nFrom the shouter plugin.\n');
    // The plugin's flag parses (a slash command needs no model), and a typo is still one line with a suggestion.
    const run = await runKeel(['-p', '/help', '--shout', 'HEY'], { cwd: ws.dir, env: env() });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const typo = await runKeel(['-p', '/help', '--shoot', 'HEY'], { cwd: ws.dir, env: env() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe("keel: unknown option '--shoot' (did you mean --shout?)\n");
  });

  it("refuses a plugin flag that takes one of Keel's own names, naming the plugin", async () => {
    ws = makeWorkspace({ git: true });
    writeFileSync(path.join(ws.home, 'agent.config.ts'), SHOUTER.replace("name: 'shout'", "name: 'model'"));
    const help = await runKeel(['help'], { cwd: ws.dir, env: env() });
    expect(help.code).toBe(2);
    expect(help.stderr).toBe("keel: plugin shouter: the flag --model is one of Keel's own; pick another name\n");
  });
});
