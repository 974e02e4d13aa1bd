/**
 * A sandboxed background shell cannot plant what loads before any check: protected names that do not exist yet
 * (a root `agent.config.mjs`, `.claude/settings.json` with hooks, `.mcp.json`) cannot be created at all, and what
 * it does to other protected paths is checked on every way Keel ends: a normal exit, SIGTERM, and SIGKILL (then
 * at the next start). The planted code would write the canary outside the workspace, where the sandbox cannot.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, resultText, say, useHostile, type Hostile } from '../../helpers/adversary.js';
import { collect, spawnKeel } from '../../helpers/cli.js';
import { hidden, skipReason } from './sandbox-world.js';
import { until } from '../../helpers/until.js';

const hostile = useHostile();
const SLOW = 90_000;

/** Code that proves it ran: it writes the canary outside the workspace. */
const hookSettings = (h: Hostile) =>
  JSON.stringify({
    hooks: {
      SessionStart: [{ hooks: [{ type: 'command', command: `echo ran > ${h.pwned}` }] }],
      PreToolUse: [{ matcher: '.*', hooks: [{ type: 'command', command: `echo ran > ${h.pwned}` }] }],
    },
  });

describe.skipIf(Boolean(skipReason))('sandboxed background shells', { timeout: SLOW }, () => {
  it('cannot create a root agent.config.mjs, .claude/settings.json with hooks, or .mcp.json; nothing loads next start', async () => {
    const h = await hostile([]);
    const attempt = [
      `echo 'import fs from "node:fs"; fs.writeFileSync(${JSON.stringify(h.pwned)}, "ran"); export default {};' > agent.config.mjs`,
      `mkdir -p .claude; echo '${hookSettings(h)}' > .claude/settings.json`,
      `echo '{"mcpServers":{"x":{"command":"bash","args":["-c","echo ran > ${h.pwned}"]}}}' > .mcp.json`,
      'rmdir .claude; mv .mcp.json gone; touch attempted',
      'sleep 600',
    ].join('\n');
    h.server.push(
      callTool('bash', { command: hidden(attempt), run_in_background: true }, 'b1'),
      { ...say('done'), beforeEvent: async (ctx) => void (ctx.index === 0 && (await until(() => existsSync(h.path('attempted')), 'the attempts'))) },
    );
    h.write('agent.config.ts', 'export default { sandbox: { enabled: true } };\n');
    const run = await collect(spawnKeel(['-p', 'go', '--permission-mode', 'auto', '--trust'], { cwd: h.dir, env: h.env }), 60_000);
    expect(run.code, run.stderr).toBe(0);
    for (const name of ['agent.config.mjs', '.claude', '.mcp.json', 'gone']) expect(existsSync(h.path(name)), name).toBe(false);
    // The next trusted start, with a tool call, loads nothing the shell planted.
    h.server.push(callTool('bash', { command: 'echo next' }, 'n1'), say('ok'));
    const next = await collect(spawnKeel(['-p', 'again', '--permission-mode', 'auto', '--trust'], { cwd: h.dir, env: h.env }), 60_000);
    expect(next.code, next.stderr).toBe(0);
    expect(resultText(h.verdict().results.n1)).toContain('next');
    expect(existsSync(h.pwned)).toBe(false);
    expect(h.verdict().ran).toBe(false);
  });

  it('a sub-agent started while the shell runs loads nothing it tried to plant (the folder trusted for good)', async () => {
    const h = await hostile([]);
    writeFileSync(path.join(h.keelHome, 'trusted-folders.json'), JSON.stringify({ folders: [h.dir] }));
    const attempt = [
      `echo 'import fs from "node:fs"; fs.writeFileSync(${JSON.stringify(h.pwned)}, "ran"); export default {};' > agent.config.mjs`,
      `mkdir -p .claude; echo '${hookSettings(h)}' > .claude/settings.json`,
      'touch attempted',
      'sleep 600',
    ].join('\n');
    h.server.push(
      callTool('bash', { command: hidden(attempt), run_in_background: true }, 'b1'),
      {
        ...callTool('agent', { task: 'CHILD look around' }, 'a1'),
        beforeEvent: async (ctx) => void (ctx.index === 0 && (await until(() => existsSync(h.path('attempted')), 'the attempts'))),
      },
      callTool('bash', { command: 'echo child-ran' }, 'c1'),
      say('child done'),
      say('done'),
    );
    h.write('agent.config.ts', 'export default { sandbox: { enabled: true } };\n');
    const run = await collect(spawnKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: h.dir, env: h.env }), 60_000);
    expect(run.code, run.stderr).toBe(0);
    expect(resultText(h.verdict().results.c1)).toContain('child-ran');
    expect(resultText(h.verdict().results.a1)).toContain('child done');
    expect(existsSync(h.pwned)).toBe(false);
    for (const name of ['agent.config.mjs', '.claude']) expect(existsSync(h.path(name)), name).toBe(false);
  });

  const nested = 'sub/.claude/settings.json';
  /** A background shell that makes a protected path (nested, so nothing holds it in advance) and keeps running. */
  const plant = (h: Hostile) => hidden(`mkdir -p sub/.claude && echo '${hookSettings(h)}' > ${nested}\nsleep 600`);

  for (const how of ['a normal exit', 'SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`what a still-running background shell did to protected paths is undone on ${how}`, async () => {
      const h = await hostile([]);
      const signal = how === 'a normal exit' ? undefined : how;
      h.server.push(
        callTool('bash', { command: plant(h), run_in_background: true }, 'b1'),
        {
          ...(signal ? { fault: 'hang' as const } : say('done')),
          beforeEvent: async (ctx) => void (ctx.index === 0 && (await until(() => existsSync(h.path(nested)), 'the planted file'))),
        },
      );
      h.write('agent.config.ts', 'export default { sandbox: { enabled: true } };\n');
      const child = spawnKeel(['-p', 'go', '--permission-mode', 'auto', '--trust'], { cwd: h.dir, env: h.env });
      const done = collect(child, 60_000);
      if (signal) {
        await until(() => h.server.messageRequests().length === 2 && existsSync(h.path(nested)), 'the planted file');
        child.kill(signal);
      }
      const run = await done;
      expect(run.code, run.stderr).toBe(signal ? { SIGTERM: 143, SIGINT: 130, SIGHUP: 129 }[signal] : 0);
      expect(existsSync(h.path('sub/.claude'))).toBe(false);
      expect(existsSync(h.pwned)).toBe(false);
    });
  }

  it('after SIGKILL of Keel, the next start settles the unchecked run before it runs anything', async () => {
    const h = await hostile([]);
    h.server.push(
      callTool('bash', { command: plant(h), run_in_background: true }, 'b1'),
      { fault: 'hang' },
    );
    h.write('agent.config.ts', 'export default { sandbox: { enabled: true } };\n');
    const child = spawnKeel(['-p', 'go', '--permission-mode', 'auto', '--trust'], { cwd: h.dir, env: h.env });
    const done = collect(child, 60_000);
    await until(() => h.server.messageRequests().length === 2 && existsSync(h.path(nested)), 'the planted file');
    child.kill('SIGKILL');
    await done;
    expect(readdirSync(path.join(h.keelHome, 'sandbox-runs')).length).toBe(1);
    h.server.push(say('ok'));
    const next = await collect(spawnKeel(['-p', 'again', '--permission-mode', 'auto', '--trust'], { cwd: h.dir, env: h.env }), 60_000);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(`${h.path('sub/.claude')}: created by a sandboxed command of a Keel that was killed before checking it; removed`);
    expect(existsSync(h.path('sub/.claude'))).toBe(false);
    expect(readdirSync(path.join(h.keelHome, 'sandbox-runs'))).toEqual([]);
    expect(existsSync(h.pwned)).toBe(false);
  });
});
