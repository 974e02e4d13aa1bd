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

const prepare = useScriptedProjects();
const SECRET = 'CANARY-ENVIRON-BLOCK-c41d07';
const KEY = `sk-ant-${SECRET}`;

/** Every ancestor from the command's parent up: its pid, its name, and any entry of its environ naming the canary's prefix. */
export const ANCESTOR_WALK = [
  'pid=$PPID; hops=0',
  'while [ -n "$pid" ] && [ "$pid" -gt 0 ] && [ $hops -lt 64 ]; do',
  '  echo "== $pid $(cat /proc/$pid/comm 2>/dev/null) environ=$(tr "\\0" "\\n" < /proc/$pid/environ 2>/dev/null | wc -l)"',
  '  tr "\\0" "\\n" < /proc/$pid/environ 2>/dev/null | grep -a "CANARY-" || true',
  '  pid=$(awk \'/^PPid:/ { print $2 }\' /proc/$pid/status 2>/dev/null); hops=$((hops + 1))',
  'done',
].join('\n');

function toolResults(server: ScriptedServer): string {
  return server
    .messageRequests()
    .map((r) => JSON.stringify((r.body.messages as Array<{ content: unknown }>).at(-1)!.content))
    .join('\n');
}

async function walk(extra: Record<string, string>) {
  const { ws, env, server } = await prepare([callTool('bash', { command: ANCESTOR_WALK }, 'toolu_walk'), say('done')]);
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
  // The walk ran: it printed Keel (its parent) and went on past it.
  expect(results.match(/== \d+ /g)?.length ?? 0).toBeGreaterThanOrEqual(2);
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
