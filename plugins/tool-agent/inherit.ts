/**
 * The sub-agent's side of the handoff: read the parent's policy from the private descriptor before anything is
 * configured, take it as the highest config layer, and once the kernel is built refuse to run if it is looser
 * than what was handed (other plugins, an allow rule or a setting the parent did not have, a rule it had missing).
 */
import { closeSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { KeelError, errorMessage, type ConfigLayer, type Kernel } from '../../kernel/index.js';
import { isPlainData, NOT_HANDED } from './handoff.js';
import { HANDOFF_ENV, HANDOFF_FD, HANDOFF_SOURCE, HANDOFF_VERSION, type PolicyHandoff, type Rules } from './policy.js';

/** Sub-agents' refusals start with this, so the parent's error result says who refused. */
const REFUSE = 'sub-agent refused to start:';

function refuse(why: string): KeelError {
  return new KeelError(`${REFUSE} ${why}`, { code: 'config', exitCode: 2 });
}

/** Reads and checks the handoff's shape; the descriptor is closed so nothing the child starts inherits it. */
export function readHandoff(env: NodeJS.ProcessEnv): PolicyHandoff {
  if (env[HANDOFF_ENV] !== String(HANDOFF_FD)) {
    throw refuse(`no policy was handed over (${HANDOFF_ENV}); sub-agents start only from a parent's agent call`);
  }
  let text: string;
  try {
    text = readFileSync(HANDOFF_FD, 'utf8');
  } catch (err) {
    throw refuse(`cannot read the policy handed over on descriptor ${HANDOFF_FD}: ${errorMessage(err)}`);
  } finally {
    try {
      closeSync(HANDOFF_FD);
    } catch {
      // already closed
    }
    delete env[HANDOFF_ENV];
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refuse(`the policy handed over is not JSON (${text.length} bytes)`);
  }
  const h = parsed as Partial<PolicyHandoff>;
  if (typeof h !== 'object' || h === null || h.version !== HANDOFF_VERSION) throw refuse(`the policy handed over has version ${String(h?.version)}, this build reads ${HANDOFF_VERSION}`);
  if (!Array.isArray(h.plugins) || !h.plugins.every((p) => typeof p === 'string')) throw refuse('the policy handed over has no plugin list');
  if (typeof h.values !== 'object' || h.values === null || Array.isArray(h.values) || !isPlainData(h.values)) throw refuse('the policy handed over has no settings');
  return h as PolicyHandoff;
}

/** The handed settings as the top config layer; the handoff itself rides along under `subagentPolicy`. */
export function handoffLayer(handoff: PolicyHandoff): ConfigLayer {
  return { kind: 'flags', source: HANDOFF_SOURCE, values: { ...handoff.values, subagentPolicy: handoff } };
}

/** Keys whose layers add up rather than replace: checked for containment, not equality. */
const ACCUMULATED = new Set(['permissions', 'mcpServers', 'env']);

/** What makes this kernel looser than the handed policy, or undefined when it is not. */
export function looserThanHanded(kernel: Kernel, handoff: PolicyHandoff): string | undefined {
  const mine = kernel.plugins.map((p) => p.name);
  const missing = handoff.plugins.filter((name) => !mine.includes(name));
  if (missing.length) return `the parent runs the plugin${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, which this process does not load`;
  const extra = mine.filter((name) => !handoff.plugins.includes(name));
  if (extra.length) return `this process loads the plugin${extra.length > 1 ? 's' : ''} ${extra.join(', ')}, which the parent does not run`;

  const handed = (handoff.values.permissions ?? { allow: [], ask: [], deny: [] }) as Rules;
  const rules = kernel.config.permissions;
  const notIn = (list: string[], of: string[]) => list.filter((rule) => !of.includes(rule));
  const allowMore = notIn(rules.allow, handed.allow);
  if (allowMore.length) return `allow rule ${allowMore.map((r) => `"${r}"`).join(', ')} (from ${kernel.config.sources.permissions ?? 'config'}) is not among the parent's`;
  for (const kind of ['deny', 'ask'] as const) {
    const lost = notIn(handed[kind], rules[kind]);
    if (lost.length) return `the parent's ${kind} rule ${lost.map((r) => `"${r}"`).join(', ')} is not in force here`;
  }
  for (const [key, value] of Object.entries(handoff.values)) {
    if (ACCUMULATED.has(key)) continue;
    if (!isDeepStrictEqual(normalize(kernel.config[key]), normalize(value))) return `the setting "${key}" differs from the parent's (${kernel.config.sources[key] ?? 'a plugin'} set it)`;
  }
  // A setting of the child's own (its config files) that the parent did not run under: an SDK host reads no files.
  for (const [key, value] of Object.entries(kernel.config)) {
    if (NOT_HANDED.has(key) || ACCUMULATED.has(key) || value === undefined || key in handoff.values || !isPlainData(value)) continue;
    return `the setting "${key}" (from ${kernel.config.sources[key] ?? 'a plugin'}) is not among the parent's`;
  }
  const servers = (handoff.values.mcpServers ?? {}) as Record<string, unknown>;
  const moreServers = Object.keys(kernel.config.mcpServers).filter((name) => !(name in servers));
  if (moreServers.length) return `MCP server ${moreServers.join(', ')} (from ${kernel.config.sources[`mcpServers.${moreServers[0]}`] ?? 'config'}) is not among the parent's`;
  return undefined;
}

/** Compared as JSON sees them (a key set to undefined is no key). */
function normalize(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}
