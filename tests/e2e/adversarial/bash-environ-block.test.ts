/**
 * With credentials scrubbed from commands, a command cannot read them from Keel's own environment block either:
 * the model's command walks every ancestor (/proc/<pid>/status PPid) and reads each one's /proc/<pid>/environ, and
 * the tool result sent back to the model holds no canary, while Keel still authenticates with the key. Without the
 * scrub the canary is there (the walk does find it), as the README says.
 */
import { describe, expect, it } from 'vitest';
import { apiKeyOf, callTool, say, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { runKeel } from '../../helpers/cli.js';
import { useScriptedProjects } from '../../helpers/project.js';
import { ancestorEnvironWalk, walkedAncestors } from '../../helpers/environ-walk.js';

const prepare = useScriptedProjects();
const SECRET = 'CANARY-ENVIRON-BLOCK-c41d07';
const KEY = `sk-ant-${SECRET}`;

/** The text of every tool result the model was sent. */
function toolResults(server: ScriptedServer): string {
  const blocks = server.messageRequests().flatMap((r) => (r.body.messages as Array<{ content: unknown }>).at(-1)!.content as Array<{ type: string; content?: unknown }>);
  return blocks
    .filter((b) => b.type === 'tool_result')
    .map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content)))
    .join('\n');
}

async function walk(extra: Record<string, string>) {
  const { ws, env, server } = await prepare([callTool('bash', { command: ancestorEnvironWalk('CANARY-') }, 'toolu_walk'), say('done')]);
  const run = await runKeel(['-p', 'walk', '--permission-mode', 'auto'], {
    cwd: ws.dir,
    env: { ...env, ANTHROPIC_API_KEY: KEY, AWS_SECRET_ACCESS_KEY: `aws-${SECRET}`, ...extra },
  });
  expect(run.code, run.stderr).toBe(0);
  // Keel authenticated with the key on every request, the one after the command included.
  const requests = server.messageRequests();
  expect(requests).toHaveLength(2);
  for (const request of requests) expect(apiKeyOf(request)).toBe(KEY);
  const results = toolResults(server);
  // The walk read Keel's environ (its parent, with entries left) and went on past it. (Its comm is `node` on Node 20,
  // `MainThread` on Node 24, which names its main thread: the command line says which process it is.)
  const ancestors = walkedAncestors(results);
  expect(ancestors.length).toBeGreaterThanOrEqual(2);
  expect(ancestors[0]!.cmdline).toMatch(/\bnode\b.*\/bin\/keel\.js -p walk/);
  expect(ancestors[0]!.entries).toBeGreaterThan(3);
  return results;
}

describe("a command reading its ancestors' /proc/<pid>/environ", () => {
  it('KEEL_SUBPROCESS_ENV_SCRUB=1 (the binary from its start-up snapshot): no ancestor shows the key', async () => {
    const results = await walk({ KEEL_SUBPROCESS_ENV_SCRUB: '1' });
    expect(results).not.toContain(SECRET);
  });

  it('CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1 without the snapshot: no ancestor shows the key', async () => {
    const results = await walk({ CLAUDE_CODE_SUBPROCESS_ENV_SCRUB: '1', KEEL_NO_SNAPSHOT: '1' });
    expect(results).not.toContain(SECRET);
  });

  it("without scrubbing, Keel's own environ shows it (the walk finds what is there)", async () => {
    const results = await walk({});
    expect(results).toContain(`ANTHROPIC_API_KEY=${KEY}`);
    expect(results).toContain(`AWS_SECRET_ACCESS_KEY=aws-${SECRET}`);
  });
});
