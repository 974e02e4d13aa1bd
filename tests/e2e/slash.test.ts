import { describe, expect, it } from 'vitest';
import { MAIN_FLAGS } from '../../plugins/print/help.js';
import { plainMessages, say } from '../helpers/anthropic-server.js';
import { ndjson, runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();

const SUMMARY = ['## Completed tasks', 'Greeted the user.', '## Key findings', 'None.', '## Current state', 'Idle.', '## Pending work', 'None.', '## Important decisions', 'None.'].join('\n');

describe('slash commands in headless runs', () => {
  it('runs a registered command instead of calling the model', async () => {
    const { env, ws, server } = await prepare([]);
    const run = await runKeel(['-p', '/cost'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\$0/);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('/help lists every slash command with its description, and the main flags, without calling the model', async () => {
    const { env, ws, server } = await prepare([]);
    // A slash command calls no model, so it runs without an API key.
    const run = await runKeel(['-p', '/help'], { cwd: ws.dir, env: { ...env, ANTHROPIC_API_KEY: undefined } });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout.split('\n')[0]).toBe('Slash commands:');
    for (const name of ['compact', 'cost', 'help', 'memory', 'sessions']) expect(run.stdout).toMatch(new RegExp(`^  /${name}\\s{2,}\\S`, 'm'));
    expect(run.stdout).toMatch(/^ {2}\/help\s+list the slash commands and the main flags$/m);
    expect(run.stdout).toContain('Main flags (keel --help lists them all):');
    const help = (await runKeel(['--help'], { cwd: ws.dir, env })).stdout;
    for (const [flag] of MAIN_FLAGS) {
      expect(run.stdout).toContain(`  ${flag}`);
      // Every flag /help names is one keel --help documents.
      expect(help).toContain(flag);
    }
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('sends a prompt that only looks like a command to the model', async () => {
    const { env, ws, server } = await prepare([say('that is the system binaries folder')]);
    const run = await runKeel(['-p', '/usr/bin holds what?'], { cwd: ws.dir, env });
    expect(run.stdout).toBe('that is the system binaries folder\n');
    expect(plainMessages(server.messageRequests()[0].body.messages)[0].content).toBe('/usr/bin holds what?');
  });

  it('/compact on a continued session compacts it, and the next run starts from the summary', async () => {
    const { env, ws, server } = await prepare([say('Hello there.'), say(SUMMARY), say('Still here.')]);
    expect((await runKeel(['-p', 'hi'], { cwd: ws.dir, env })).code).toBe(0);
    const compact = await runKeel(['-p', '/compact keep it short', '--continue', '--output-format', 'stream-json'], { cwd: ws.dir, env });
    expect(compact.stderr).toBe('');
    expect(compact.code).toBe(0);
    const lines = ndjson(compact.stdout);
    expect(lines.map((l) => l.subtype ?? l.type)).toEqual(['init', 'compact_boundary', 'success']);
    expect(lines[1].compact_metadata.trigger).toBe('manual');
    const summaryRequest = server.messageRequests()[1].body;
    expect(JSON.stringify(summaryRequest.messages)).toContain('keep it short');

    const next = await runKeel(['-p', 'are you there?', '--continue'], { cwd: ws.dir, env });
    expect(next.stdout).toBe('Still here.\n');
    const sent = plainMessages(server.messageRequests()[2].body.messages);
    expect(JSON.stringify(sent[0])).toContain('Completed tasks');
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'are you there?' });
  });

  it('a failing command is one line on stderr and exit 1', async () => {
    const { env, ws } = await prepare([]);
    ws.write(
      'agent.config.ts',
      `import { definePlugin } from 'keel';
const fuse = definePlugin(() => ({
  name: 'fuse',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.commands.register({ name: 'explode', description: 'always fails', run: async () => { throw new Error('the fuse blew'); } });
  },
}));
export default { plugins: [fuse()] };`,
    );
    const run = await runKeel(['-p', '/explode now', '--trust'], { cwd: ws.dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('keel: /explode: the fuse blew\n');
    const json = await runKeel(['-p', '/explode', '--trust', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ subtype: 'error_during_execution', is_error: true, error: '/explode: the fuse blew', num_turns: 0 });
  });
});
