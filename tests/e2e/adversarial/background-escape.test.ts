/**
 * Nothing a tool starts outlives Keel: a daemon that double-forks into a new session (`setsid`), the children a
 * background shell leaves once its first process ended (`cmd >/dev/null 2>&1 &`), and a grandchild an MCP stdio
 * server starts with `setsid`, on every way Keel ends: a normal exit, SIGTERM, and SIGKILL (then the next start
 * ends the survivors). Each canary writes a heartbeat outside the workspace (inside it under the sandbox, which
 * cannot write outside); its command line carries a unique marker so the test can tell whether it still runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVERYTHING } from '../../helpers/mcp.js';
import { callTool, resultText, say, useHostile, type Hostile } from '../../helpers/adversary.js';
import { collect, spawnKeel } from '../../helpers/cli.js';
import type { ScriptedTurn as ScriptStep } from '../../helpers/anthropic-server.js';
import { hidden, skipReason } from './sandbox-world.js';
import { until } from '../../helpers/until.js';

const hostile = useHostile();
const SLOW = 90_000;

/** Polls `check` until it holds; fails naming `what` after a generous bound. */
const marker = () => `keelcanary${Math.floor(Math.random() * 9e8) + 1e8}`;
const alive = (mark: string) => spawnSync('pgrep', ['-f', mark]).status === 0;
const killCanary = (mark: string) => spawnSync('pkill', ['-KILL', '-f', mark]);

interface World {
  h: Hostile;
  heartbeat: string;
  mark: string;
  /** Keel's environment: the world's, plus CANARY_DIR (where the heartbeat goes). */
  env: Record<string, string>;
}

/**
 * A hostile world whose model runs `command(mark)` with bash (in the foreground, or in the background) and then
 * `last`, once the canary runs. The command writes its heartbeat to "$CANARY_DIR/heartbeat-<mark>": outside the
 * workspace, or inside it under the sandbox, which can write nowhere else.
 */
async function setup(sandbox: boolean, command: (mark: string) => string, last: ScriptStep = say('done'), background = false, waitCanary = true): Promise<World> {
  const mark = marker();
  const box = { heartbeat: '' };
  const h = await hostile([
    callTool('bash', { command: hidden(command(mark), 'bash', `.payload-${mark}`), ...(background ? { run_in_background: true } : {}) }, 'b1'),
    {
      ...last,
      beforeEvent: async (ctx) => {
        if (ctx.index === 0 && waitCanary) await until(() => existsSync(box.heartbeat) && alive(mark), `the canary to run (bash said: ${JSON.stringify(ctx.request.body.messages?.at(-1))})`);
        return last.beforeEvent?.(ctx);
      },
    },
  ]);
  const canaryDir = sandbox ? h.dir : h.outside;
  box.heartbeat = path.join(canaryDir, `heartbeat-${mark}`);
  if (sandbox) h.write('agent.config.ts', 'export default { sandbox: { enabled: true } };\n');
  return { h, heartbeat: box.heartbeat, mark, env: { ...h.env, CANARY_DIR: canaryDir } };
}

const loop = (mark: string) => `bash -c 'while :; do date +%s%N > "$0"; sleep 0.2; done' "$CANARY_DIR/heartbeat-${mark}" ${mark}`;

/** A daemon that leaves Keel's process group and tree: a subshell backgrounds \`setsid\`, then exits at once. */
const daemon = (mark: string) => `( setsid ${loop(mark)} >/dev/null 2>&1 </dev/null & ) ; echo launched`;

const modes = [
  { name: 'without the sandbox', sandbox: false },
  { name: 'with the sandbox', sandbox: true },
].filter((m) => !m.sandbox || !skipReason);

for (const mode of modes) {
  const trust = mode.sandbox ? ['--trust'] : [];
  describe(`background escape ${mode.name}`, { timeout: SLOW }, () => {
    // Under the sandbox a foreground command is its PID namespace's init: its daemons die with it at once. The
    // daemon there is started from a background shell that goes on running, the case that can outlive Keel.
    const launch = (w: string) => (mode.sandbox ? `${w}; sleep 600` : w);
    const daemonSetup = (last?: ScriptStep) => setup(mode.sandbox, (m) => launch(daemon(m)), last, mode.sandbox);
    const start = (w: World) => spawnKeel(['-p', 'go', '--permission-mode', 'auto', ...trust], { cwd: w.h.dir, env: w.env });

    it('a double-forked setsid daemon dies when Keel exits normally', async () => {
      const w = await daemonSetup();
      try {
        const run = await collect(start(w), 60_000);
        expect(run.code, run.stderr).toBe(0);
        expect(resultText(w.h.verdict().results.b1)).toMatch(/launched|Started in the background/);
        await until(() => !alive(w.mark), 'the daemon to be gone');
      } finally {
        killCanary(w.mark);
      }
    });

    it('a double-forked setsid daemon dies when Keel gets SIGTERM', async () => {
      const w = await daemonSetup({ fault: 'hang' });
      try {
        const child = start(w);
        const done = collect(child, 60_000);
        await until(() => w.h.server.messageRequests().length === 2 && existsSync(w.heartbeat) && alive(w.mark), 'the daemon to run');
        child.kill('SIGTERM');
        const run = await done;
        expect(run.code).toBe(143);
        await until(() => !alive(w.mark), 'the daemon to be gone');
      } finally {
        killCanary(w.mark);
      }
    });

    it('a double-forked setsid daemon that survived SIGKILL of Keel dies at the next start', async () => {
      const w = await daemonSetup({ fault: 'hang' });
      try {
        const child = start(w);
        const done = collect(child, 60_000);
        await until(() => w.h.server.messageRequests().length === 2 && existsSync(w.heartbeat) && alive(w.mark), 'the daemon to run');
        child.kill('SIGKILL');
        await done;
        if (!mode.sandbox) {
          // Nothing of Keel ran after SIGKILL: the record in $KEEL_HOME is what the next start goes by.
          expect(alive(w.mark)).toBe(true);
          expect(readdir(path.join(w.h.keelHome, 'processes')).length).toBe(1);
        }
        const next = await collect(spawnKeel(['-p', '/bashes', ...trust], { cwd: w.h.dir, env: w.env }), 60_000);
        expect(next.code, next.stderr).toBe(0);
        await until(() => !alive(w.mark), 'the daemon to be gone');
        expect(readdir(path.join(w.h.keelHome, 'processes'))).toEqual([]);
      } finally {
        killCanary(w.mark);
      }
    });

    it('a background shell whose first process ended (cmd >/dev/null 2>&1 &) leaves no child behind', async () => {
      // Under the sandbox the shell is its PID namespace's init: its children end with it, before they can run on.
      const w = await setup(mode.sandbox, (m) => `${loop(m)} >/dev/null 2>&1 &`, say('done'), true, !mode.sandbox);
      try {
        const run = await collect(start(w), 60_000);
        expect(run.code, run.stderr).toBe(0);
        await until(() => !alive(w.mark), 'the child to be gone');
      } finally {
        killCanary(w.mark);
      }
    });

    it('a background shell that double-forks a daemon: gone after SIGKILL of Keel and the next start', async () => {
      const w = await setup(mode.sandbox, (m) => `${daemon(m)}; sleep 600`, { fault: 'hang' }, true);
      try {
        const child = start(w);
        const done = collect(child, 60_000);
        await until(() => w.h.server.messageRequests().length === 2 && existsSync(w.heartbeat) && alive(w.mark), 'the daemon to run');
        child.kill('SIGKILL');
        await done;
        const next = await collect(spawnKeel(['-p', '/bashes', ...trust], { cwd: w.h.dir, env: w.env }), 60_000);
        expect(next.code, next.stderr).toBe(0);
        await until(() => !alive(w.mark), 'the daemon to be gone');
      } finally {
        killCanary(w.mark);
      }
    });
  });
}

describe('background escape: kill_shell', { timeout: SLOW }, () => {
  it('kill_shell on a shell whose first process ended kills what it left running', async () => {
    const mark = marker();
    const h = await hostile([
      callTool('bash', { command: `bash -c 'while :; do sleep 0.2; done' ${mark} >/dev/null 2>&1 &`, run_in_background: true }, 'b1'),
      { ...callTool('kill_shell', { shell_id: 'bash_1' }, 'k1'), beforeEvent: async () => void (await until(() => alive(mark), 'the child to run')) },
      { ...say('done'), beforeEvent: async () => void (await until(() => !alive(mark), 'the child to be gone')) },
    ]);
    try {
      const run = await collect(spawnKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: h.dir, env: h.env }), 60_000);
      expect(run.code, run.stderr).toBe(0);
      expect(resultText(h.verdict().results.k1)).toMatch(/killed \d+ process\(es\) it had left running/);
    } finally {
      killCanary(mark);
    }
  });
});

describe('background escape: MCP stdio servers', { timeout: SLOW }, () => {
  it("a server's setsid grandchild ends with Keel", async () => {
    const mark = marker();
    const h = await hostile([{ ...say('done'), beforeEvent: async () => void (await until(() => alive(mark), 'the grandchild to run')) }]);
    const heartbeat = path.join(h.outside, `heartbeat-${mark}`);
    const launcher = `( setsid bash -c 'while :; do date +%s%N > "$0"; sleep 0.2; done' ${heartbeat} ${mark} >/dev/null 2>&1 </dev/null & ); exec "${process.execPath}" "${EVERYTHING}" stdio`;
    const config = JSON.stringify({ mcpServers: { sly: { command: 'bash', args: ['-c', launcher] } } });
    try {
      const run = await collect(spawnKeel(['-p', 'go', '--mcp-config', config, '--permission-mode', 'auto'], { cwd: h.dir, env: h.env }), 60_000);
      expect(run.code, run.stderr).toBe(0);
      expect(existsSync(heartbeat)).toBe(true);
      await until(() => !alive(mark), 'the grandchild to be gone');
    } finally {
      killCanary(mark);
    }
  });
});

function readdir(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}
