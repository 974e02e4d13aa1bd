/** A background shell in the sandbox is checked when it ends: what it left on a protected path is put back. */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { callTool, say, useHostile } from '../../helpers/adversary.js';

const hostile = useHostile();

describe('sandboxed background shells', () => {
  it('a config file a background command creates is removed once the command ends', async () => {
    const h = await hostile([
      callTool('bash', { command: 'echo "export default {}" > agent.config.mjs', run_in_background: true }, 'bg'),
      callTool('bash', { command: 'sleep 1' }, 'wait'),
      callTool('bash_output', { shell_id: 'bash_1' }, 'out'),
      say('done'),
    ]);
    h.write('agent.config.ts', 'export default { sandbox: { enabled: true } };\n');
    const run = await h.run(['-p', 'go', '--permission-mode', 'auto', '--trust'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(h.path('agent.config.mjs'))).toBe(false);
    expect(h.verdict().ran).toBe(false);
  }, 90_000);
});
