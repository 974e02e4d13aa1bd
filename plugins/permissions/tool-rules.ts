/**
 * The `tool-rules` service: which rule (deny, then ask, then allow) covers a tool name, for plugins that judge
 * something that is not a tool call of their own — the MCP bridge's resource reads, and whether the user
 * allow-listed an MCP server or tool (so its `readOnlyHint` may be trusted).
 */
import type { Session } from '../../kernel/index.js';
import { sessionRules } from './command.js';
import { isBare, toolMatches, type Rule, type RuleKind } from './rules.js';

export interface ToolRules {
  /**
   * The first bare rule (no specifier) matching `name`, deny before ask before allow, from the config's rules
   * and, given a session, the rules `/permissions` added to it. Undefined when no rule names it.
   */
  match(name: string, session?: Session): { kind: RuleKind; text: string } | undefined;
}

const ORDER: RuleKind[] = ['deny', 'ask', 'allow'];

export function toolRules(configured: Rule[]): ToolRules {
  return {
    match(name, session) {
      const rules = [...(session ? sessionRules(session) : []), ...configured].filter((rule) => isBare(rule) && toolMatches(rule, name));
      for (const kind of ORDER) {
        const found = rules.find((rule) => rule.kind === kind);
        if (found) return { kind, text: found.text };
      }
      return undefined;
    },
  };
}
