/**
 * A typo is not a paid prompt: `keel sesions` and `keel -p "/cot"` say what is unknown and name the near names
 * (exit 2) without calling the model; a custom command or a skill registered at session start is known.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { say, startAnthropicServer, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace | undefined;
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
  ws = undefined;
  server = undefined;
});

async function setup(answers = 1) {
  ws = makeWorkspace({ git: true });
  server = await startAnthropicServer(Array.from({ length: answers }, () => say('the model answered')));
  return { cwd: ws.dir, env: { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server.url } };
}

describe('unknown names', () => {
  it('keel sesions: unknown command, did you mean sessions, exit 2, no model call', async () => {
    const opts = await setup();
    const run = await runKeel(['sesions'], opts);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('keel: unknown command "sesions" (did you mean sessions?); keel --help lists the commands (to send it as a prompt: keel -p "sesions")\n');
    expect(server!.requests).toHaveLength(0);
  });

  it("a plugin's sub-command with a bad config value says what is wrong with the config, not how many words it got", async () => {
    const opts = await setup();
    // The user's config: it loads wherever keel runs.
    writeFileSync(path.join(ws!.home, 'agent.config.ts'), 'export default { fleet: { redisUrl: 5 } };\n');
    const run = await runKeel(['fleet', 'status'], opts);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^keel: .*agent\.config\.ts: fleet\.redisUrl: Invalid input: expected string, received number\n$/);
    expect(run.stderr).not.toContain('too many arguments');
  });

  it('keel -p "/cot": unknown slash command with the near names, exit 2, no model call; a prompt starting with a word goes through', async () => {
    const opts = await setup();
    const run = await runKeel(['-p', '/cot'], opts);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^keel: unknown command \/cot \(did you mean \/cost\?\); keel -p \/help lists them/);
    const unknown = await runKeel(['-p', '/nothing-like-it at all'], opts);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^keel: unknown command \/nothing-like-it; /);
    expect(server!.requests).toHaveLength(0);
    const asked = await runKeel(['-p', 'about /cot'], opts);
    expect(asked.stdout).toContain('the model answered');
  });

  it('a custom command and a skill, registered when the session starts, are known', async () => {
    const opts = await setup(2);
    ws!.write('.claude/commands/greet.md', 'Say hello to $ARGUMENTS.\n');
    ws!.write('.claude/skills/tidy/SKILL.md', '---\nname: tidy\ndescription: tidies things\n---\nTidy up.\n');
    for (const prompt of ['/greet Bob', '/tidy']) {
      const run = await runKeel(['-p', prompt, '--trust'], opts);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    }
    expect(server!.requests.length).toBeGreaterThan(0);
  });
});
