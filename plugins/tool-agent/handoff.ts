/**
 * The policy a parent hands its sub-agent: its plugins by name and every setting it runs under, resolved
 * (presets, `--config`, settings files, flags, an SDK host's options, `/permissions` rules of the session), with
 * the child's own tools, mode and turn allowance. It travels over a private pipe (fd 3 of the child), never the
 * environment, and the child takes it at the highest precedence and refuses to start looser (see inherit.ts).
 */
import { isAbsolute, resolve } from 'node:path';
import type { Kernel, PermissionMode, Session } from '../../kernel/index.js';
import { HANDOFF_VERSION, type PolicyHandoff, type Rules } from './policy.js';

/**
 * Keys that are not policy or that the child sets for itself: where the process runs, how its kernel was put
 * together (the plugin list is checked by name instead), secrets that go by the environment, and what the `agent`
 * call chooses (model and prompt).
 */
export const NOT_HANDED = new Set([
  'cwd',
  'projectRoot',
  'keelHome',
  'sources',
  'extra',
  'preset',
  'plugins',
  'disable',
  'packages',
  'configFiles',
  'untrustedFiles',
  'trusted',
  'apiKey',
  'baseURL',
  'model',
  'smallModel',
  'systemPrompt',
  'appendSystemPrompt',
  'ui',
  'subagentPolicy',
  // The child reads the managed files itself: managed policy is never taken from a handoff.
  'managed',
  // The parent's answer shape and goal are the parent's; the child answers the parent in text.
  'jsonSchema',
  'structuredOutputRetries',
  'goal',
  'goalCheck',
]);

/** Plain JSON data: what can cross a process boundary and mean the same on the other side. */
export function isPlainData(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isPlainData);
  if (typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value as Record<string, unknown>).every((v) => v === undefined || isPlainData(v));
}

/** A config module the child loads itself: the user's, or the project's that the parent loaded. */
function childLoads(kernel: Kernel, source: string | undefined): boolean {
  if (!source || !isAbsolute(source)) return false;
  return !(kernel.config.untrustedFiles ?? []).includes(source);
}

export interface ChildSpec {
  tools: string[];
  permissionMode: PermissionMode;
  maxTurns: number;
}

/**
 * The handoff for one child, or why the policy cannot be handed on (code given in-process: a plugin object or a
 * setting holding functions) — then no child may run.
 */
export function buildHandoff(kernel: Kernel, session: Session, child: ChildSpec): { handoff: PolicyHandoff } | { error: string } {
  const { config } = kernel;
  if (config.plugins.length > 0 && !childLoads(kernel, config.sources.plugins)) {
    const names = config.plugins.map((p) => p.name).join(', ');
    return { error: `the plugin${config.plugins.length > 1 ? 's' : ''} ${names} ${config.plugins.length > 1 ? 'were' : 'was'} given in-process (${config.sources.plugins ?? 'not from a file'}) and cannot be handed to a sub-agent process, which would run without ${config.plugins.length > 1 ? 'them' : 'it'}` };
  }
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (NOT_HANDED.has(key) || value === undefined) continue;
    if (isPlainData(value)) {
      values[key] = value;
      continue;
    }
    // Code in a config file the child loads too reaches it that way; code given in-process cannot.
    if (childLoads(kernel, config.sources[key])) continue;
    return { error: `the setting "${key}" (from ${config.sources[key] ?? 'a plugin'}) holds code, not data, and cannot be handed to a sub-agent process, which would run without it` };
  }
  // Relative folders mean the same in a child that may start elsewhere.
  if (Array.isArray(values.additionalDirectories)) values.additionalDirectories = (values.additionalDirectories as string[]).map((dir) => resolve(config.cwd, dir));
  values.permissions = rulesInForce(kernel, session);
  values.permissionMode = child.permissionMode;
  values.tools = child.tools;
  values.maxTurns = child.maxTurns;
  // The child's budget is what is left of the parent's: together they never spend more than the parent's budget.
  const left = (kernel.services.get('cost-budget') as { remaining(s: Session): number | undefined } | undefined)?.remaining(session);
  if (left !== undefined) {
    if (left <= 0) return { error: 'the budget (--max-budget-usd) is spent: no sub-agent may start' };
    values.maxBudgetUsd = left;
  } else delete values.maxBudgetUsd;
  return { handoff: { version: HANDOFF_VERSION, plugins: kernel.plugins.map((p) => p.name), values } };
}

/** The configured rules and those `/permissions` added to this session. */
function rulesInForce(kernel: Kernel, session: Session): Rules {
  const configured = kernel.config.permissions;
  const sessionRules = kernel.services.get('session-rules') as ((s: Session) => Partial<Rules>) | undefined;
  const added = typeof sessionRules === 'function' ? sessionRules(session) : {};
  return {
    allow: [...configured.allow, ...(added.allow ?? [])],
    ask: [...configured.ask, ...(added.ask ?? [])],
    deny: [...configured.deny, ...(added.deny ?? [])],
  };
}
