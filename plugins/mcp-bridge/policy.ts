/**
 * Where the bridge meets the permission policy for what is not an ordinary tool call: resource reads (judged by
 * the server's rules) and the servers' `readOnlyHint`s (trusted only for what the user allow-listed). The rules
 * come from the `tool-rules` service of the `permissions` plugin; without it nothing is read and no hint is
 * trusted.
 */
import type { Kernel, Session } from '../../kernel/index.js';

/** What the `permissions` plugin's `tool-rules` service offers. */
export interface ToolRules {
  match(name: string, session?: Session): { kind: 'allow' | 'ask' | 'deny'; text: string } | undefined;
}

export function toolRules(kernel: Kernel): ToolRules | undefined {
  const service = kernel.services.get('tool-rules') as Partial<ToolRules> | undefined;
  return typeof service?.match === 'function' ? (service as ToolRules) : undefined;
}

const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');

/**
 * The name a resource read of `server` is judged as. `@` is not allowed in tool names, so no tool has it:
 * `mcp__server`, `mcp__server__*` and `mcp__*` rules cover it; a rule naming one tool does not.
 */
export const resourceRuleName = (server: string) => `mcp__${clean(server)}__@resource`;

/** Why reading a resource of `server` is refused, or undefined when the rules let it through. */
export function resourceRefusal(kernel: Kernel, server: string, session: Session): string | undefined {
  const rules = toolRules(kernel);
  if (!rules) return 'no permission policy is loaded (the permissions plugin is not in the preset)';
  const rule = rules.match(resourceRuleName(server), session);
  if (rule?.kind === 'deny') return `the permission rule "${rule.text}" denies MCP server ${server}`;
  return undefined;
}

/**
 * A tool's `readOnlyHint` is the server's say, not the user's: it makes the tool read-level (run unasked, and in
 * plan mode) only when an allow rule of the user's config names the tool or its server.
 */
export function hintTrusted(kernel: Kernel, toolName: string): boolean {
  return toolRules(kernel)?.match(toolName)?.kind === 'allow';
}
