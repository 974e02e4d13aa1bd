import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { definePlugin, savedOutputDir, Stage, type Decision, type Kernel, type Session, type ToolResult } from '../../kernel/index.js';
import { settingsChange } from './front-matter.js';
import { GIT_HOOK_NAMES, gitSurface } from './git-surface.js';
import { packageSurface } from './package-surface.js';
import { hardLinks, isInside, resolveReal } from './paths.js';
import { pathPolicy } from './path-policy.js';
import { evaluate, resolvePaths, touchedPaths, type PolicyContext } from './policy.js';
import { editPreview, PREVIEWED_TOOLS } from './preview.js';
import { permissionsCommand, sessionRules } from './command.js';
import { isBare, parseRules, toolMatches, type Rule } from './rules.js';
import { toolRules } from './tool-rules.js';
import { readableRoots, sessionPermissions, type SessionPermissions } from './grants.js';
import { addDirCommand, addedDirs } from './add-dir.js';

export { MATRIX } from './policy.js';

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** More directories that count as inside the project for confinement (`--add-dir`). */
    additionalDirectories?: string[];
  }
}

declare module '../../kernel/types.js' {
  interface Services {
    'session-permissions': SessionPermissions;
  }
}

/** What the permissions plugin needs from the `denial-log` service, when a preset has it. */
interface SessionAllowances {
  isAllowed(session: Session, toolName: string): boolean;
}

function allowances(kernel: Kernel): SessionAllowances | undefined {
  const service = kernel.services.get('denial-log') as Partial<SessionAllowances> | undefined;
  return typeof service?.isAllowed === 'function' ? (service as SessionAllowances) : undefined;
}

/** The bash tool's current directory (kept in its session data), else the session's. */
function shellCwd(session: Session): string {
  const state = session.data.get('tool-bash') as { cwd?: unknown } | undefined;
  return typeof state?.cwd === 'string' ? state.cwd : session.cwd;
}

/**
 * The permission policy: the shell guard, `permissions` rules from every config layer, confinement of the
 * paths a tool touches, and the session's mode crossed with each tool's level.
 */
export default definePlugin(() => ({
  name: 'permissions',
  kernel: '^1.0.0',
  config: { additionalDirectories: z.array(z.string()) },
  apply(kernel) {
    const rules: Rule[] = parseRules(kernel.config.permissions, kernel.config.sources.permissions ?? 'config');
    const extraRoots = ((kernel.config.additionalDirectories as string[] | undefined) ?? []).map((dir) => resolveReal(path.resolve(kernel.config.cwd, dir)));
    const home = os.homedir();
    const keelHome = kernel.config.keelHome ? resolveReal(kernel.config.keelHome) : '';

    const contextFor = (session: Session, toolName: string): PolicyContext => ({
      rules: [...sessionRules(session), ...rules],
      mode: session.permissionMode,
      root: resolveReal(session.projectRoot),
      cwd: toolName === 'bash' ? shellCwd(session) : session.cwd,
      home,
      keelHome,
      protected: kernel.protected,
      savedOutputs: keelHome ? savedOutputDir(keelHome, session.id) : undefined,
      sessionAllowed: allowances(kernel)?.isAllowed(session, toolName) ?? false,
      extraRoots: [...extraRoots, ...addedDirs(session)],
      readableRoots: readableRoots(session),
    });

    protectLaterCode(kernel, resolveReal(home), keelHome);
    kernel.services.provide('session-permissions', sessionPermissions);
    kernel.services.provide('path-policy', pathPolicy(rules, { home, keelHome, protected: kernel.protected }));
    kernel.services.provide('tool-rules', toolRules(rules));
    // What `/permissions` added for a session, as rule texts: a sub-agent is handed them with the configured ones.
    kernel.services.provide('session-rules', (session: Session) => {
      const added = sessionRules(session);
      const of = (kind: Rule['kind']) => added.filter((r) => r.kind === kind).map((r) => r.text);
      return { allow: of('allow'), ask: of('ask'), deny: of('deny') };
    });
    kernel.commands.register(permissionsCommand(rules, kernel.config.sources.permissions ?? 'config'));
    kernel.commands.register(addDirCommand(() => extraRoots));

    // A bare deny removes the tool from the request: the model never sees it.
    kernel.hooks.selectTools.tapPromise('permissions', async (tools) =>
      tools.filter((tool) => !rules.some((rule) => rule.kind === 'deny' && isBare(rule) && toolMatches(rule, tool.name))),
    );

    kernel.hooks.prePermission.tapPromise('permissions', async (call, turn): Promise<Decision> => {
      const tool = kernel.tools.get(call.name);
      if (!tool) return { behavior: 'deny', reason: `Permission denied: unknown tool ${call.name}` };
      const ctx = contextFor(turn.session, call.name);
      const verdict = await evaluate(call, tool, ctx);
      if (verdict.resolved.length > 0) {
        judgedPaths(turn.data).set(call.id, { resolved: verdict.resolved, links: verdict.resolved.map(hardLinks), bodyOnly: verdict.bodyOnly ?? [] });
      }
      const decision = verdict.decision;
      // The user is shown what an edit would change before answering.
      if (decision.behavior === 'ask' && PREVIEWED_TOOLS.has(call.name) && verdict.resolved.length === 1) {
        const preview = await editPreview(call.name, call.input, verdict.resolved[0], ctx.cwd).catch(() => undefined);
        if (preview) return { ...decision, preview };
      }
      return decision;
    });

    // Closes the check-then-use window: a path that resolves elsewhere now than when it was judged (a symlink
    // swapped while the user was asked), a file that gained hard links, or an instruction file whose front matter
    // an earlier call of the same response changed, stops the call.
    kernel.hooks.toolExecute.tapPromise({ name: 'permissions', stage: Stage.FIRST }, async (call, turn): Promise<ToolResult | undefined> => {
      const judged = judgedPaths(turn.data).get(call.id);
      const tool = kernel.tools.get(call.name);
      if (!judged || !tool) return undefined;
      const now = resolvePaths(touchedPaths(tool, call.input), contextFor(turn.session, call.name));
      const moved = now.findIndex((p, i) => p !== judged.resolved[i]);
      if (moved !== -1 || now.length !== judged.resolved.length) {
        const at = moved === -1 ? judged.resolved.length : moved;
        return refused(`the path resolved to ${judged.resolved[at] ?? '(nothing)'} when it was checked but now resolves to ${now[at] ?? '(nothing)'}`);
      }
      if (tool.permission !== 'read') {
        const linked = now.findIndex((p, i) => hardLinks(p) > 1 && judged.links[i] <= 1);
        if (linked !== -1) return refused(`${now[linked]} gained hard links after it was checked, so the write could change a file elsewhere`);
      }
      for (const p of judged.bodyOnly) {
        const change = await settingsChange(call.name, call.input, p);
        if (change) return refused(`${p} changed since it was checked, and this call would now ${change}`);
      }
      return undefined;
    });
  },
}));

/**
 * Code that runs later from places the kernel's fixed entries cannot name: git's configured hooks folders and the
 * config files git includes (the user's next commit runs them), and the folders of plugins and presets named by
 * package (the next start runs them). Each is protected by the path its config names and by its real path.
 */
function protectLaterCode(kernel: Kernel, home: string, keelHome: string): void {
  const protect = (p: string, why: string, shallow?: boolean) => {
    for (const at of new Set([path.resolve(p), resolveReal(p)])) if (!kernel.protected.match(at, 'write')) kernel.protected.add({ path: at, why, ...(shallow ? { shallow } : {}) });
  };
  const root = resolveReal(kernel.config.projectRoot);
  for (const item of gitSurface(root, home)) {
    if (item.kind === 'config') protect(item.path, `a git config file included by ${item.from} (the hooks, aliases and programs it sets run)`);
    else {
      const why = `git's hooks folder (core.hooksPath in ${item.from}): its scripts run at the next commit`;
      // A hooks path that holds the whole project or home folder (`core.hooksPath = .`) protects its hook names only.
      const broad = isInside(root, resolveReal(item.path)) || resolveReal(item.path) === home;
      if (broad) for (const name of GIT_HOOK_NAMES) protect(path.join(item.path, name), why);
      else protect(item.path, why);
    }
  }
  const packages = packageSurface(kernel.config.packages ?? [], { projectRoot: root, cwd: resolveReal(kernel.config.cwd), keelHome });
  // Package trees can be large: the sandbox keeps them read-only by its mount and checks only the folder itself.
  for (const item of packages) protect(item.path, item.why, true);
}

function refused(why: string): ToolResult {
  return { content: `Permission denied: ${why}; the call was not run.`, isError: true };
}

interface Judged {
  resolved: string[];
  /** Hard links of each path when it was judged. */
  links: number[];
  /** Instruction files let through because their front matter stays as it is. */
  bodyOnly: string[];
}

function judgedPaths(data: Map<string, unknown>): Map<string, Judged> {
  let map = data.get('permissions') as Map<string, Judged> | undefined;
  if (!map) {
    map = new Map();
    data.set('permissions', map);
  }
  return map;
}
