/**
 * With KEEL_SUBPROCESS_ENV_SCRUB=1 (or Claude Code's CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1) a bash command, in the
 * foreground or the background, gets none of the credentials Keel reads itself; Keel still calls the model with
 * its key. Without it, commands get the whole environment, as documented.
 */
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { runKeel } from '../../helpers/cli.js';
import { useScriptedProjects } from '../../helpers/project.js';

const prepare = useScriptedProjects();
const SECRET = 'CANARY-SCRUB-51c0e2';
const PROBE = 'echo "key=[$ANTHROPIC_API_KEY] aws=[$AWS_SECRET_ACCESS_KEY] otel=[$OTEL_EXPORTER_OTLP_HEADERS] kept=[$KEEP_ME]"';

function toolResults(server: ScriptedServer): string {
  return server
    .messageRequests()
    .map((r) => JSON.stringify((r.body.messages as Array<{ content: unknown }>).at(-1)!.content))
    .join('\n');
}

async function probe(scrubVariable: string | undefined) {
  const { ws, env, server } = await prepare([
    callTool('bash', { command: PROBE }, 'toolu_fg'),
    callTool('bash', { command: `${PROBE}; sleep 0.2`, run_in_background: true }, 'toolu_bg'),
    callTool('bash', { command: 'sleep 0.5' }, 'toolu_wait'),
    callTool('bash_output', { shell_id: 'bash_1' }, 'toolu_out'),
    say('done'),
  ]);
  const run = await runKeel(['-p', 'probe', '--permission-mode', 'auto'], {
    cwd: ws.dir,
    env: {
      ...env,
      ANTHROPIC_API_KEY: `sk-ant-${SECRET}`,
      AWS_SECRET_ACCESS_KEY: `aws-${SECRET}`,
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${SECRET}`,
      KEEP_ME: 'ordinary',
      ...(scrubVariable ? { [scrubVariable]: '1' } : {}),
    },
  });
  expect(run.code).toBe(0);
  // Keel itself still authenticates with the key.
  expect(JSON.stringify(server.messageRequests()[0]!.headers)).toContain(`sk-ant-${SECRET}`);
  return toolResults(server);
}

describe('bash commands and Keel\'s credentials', () => {
  for (const variable of ['KEEL_SUBPROCESS_ENV_SCRUB', 'CLAUDE_CODE_SUBPROCESS_ENV_SCRUB']) {
    it(`${variable}=1: foreground and background commands see none of them; other variables stay`, async () => {
      const results = await probe(variable);
      expect(results.match(/key=\[\] aws=\[\] otel=\[\] kept=\[ordinary\]/g)).toHaveLength(2);
      expect(results).not.toContain(SECRET);
    });
  }

  it('without it, commands get the whole environment (as the README says)', async () => {
    const results = await probe(undefined);
    expect(results).toContain(`key=[sk-ant-${SECRET}]`);
  });
});
