/**
 * `/permissions`: shows the mode and the rules in force (with where each came from), and edits them for the
 * session: `/permissions allow|ask|deny <rule>`, `/permissions remove <rule>`, `/permissions mode <mode>`.
 */
import { normalizePermissionMode, type CommandDefinition, type Session } from '../../kernel/index.js';
import { parseRule, type Rule } from './rules.js';

const KEY = 'permissions:session-rules';

/** Rules added with `/permissions` for this session only. */
export function sessionRules(session: Session): Rule[] {
  let rules = session.data.get(KEY) as Rule[] | undefined;
  if (!rules) {
    rules = [];
    session.data.set(KEY, rules);
  }
  return rules;
}

const USAGE = 'usage: /permissions [allow|ask|deny <rule> | remove <rule> | mode <auto|edits|ask|manual|plan>]';

export function permissionsCommand(configured: Rule[], source: string): CommandDefinition {
  return {
    name: 'permissions',
    description: 'show the permission mode and rules; /permissions allow|ask|deny <rule>, remove <rule>, mode <mode> edit them for this session',
    async run(args, ctx) {
      const [verb = '', ...rest] = args.trim().split(/\s+/).filter(Boolean);
      const operand = args.trim().slice(verb.length).trim();
      const session = ctx.session;
      if (!verb) return describe(session, configured, source);
      if (verb === 'mode') {
        const mode = normalizePermissionMode(operand);
        if (!mode) throw new Error(`/permissions mode: "${operand}" is not a mode (auto, edits, ask, manual, plan)`);
        const bypassOff = ctx.kernel.config.managed?.disableBypassPermissionsMode;
        if (mode === 'auto' && bypassOff) throw new Error(`/permissions mode: the auto (bypassPermissions) mode is disabled by managed settings (${bypassOff})`);
        session.permissionMode = mode;
        return `Permission mode: ${mode}`;
      }
      if (verb === 'allow' || verb === 'ask' || verb === 'deny') {
        if (rest.length === 0) throw new Error(`/permissions ${verb}: name a rule, e.g. /permissions ${verb} bash(npm test)`);
        const rule = parseRule(verb, operand, `/permissions ${verb}`);
        sessionRules(session).push(rule);
        return `Added for this session: ${verb} ${rule.text}`;
      }
      if (verb === 'remove') {
        const rules = sessionRules(session);
        const at = rules.findIndex((r) => r.text === operand);
        if (at === -1) throw new Error(`/permissions remove: no session rule "${operand}" (rules from config files are edited in the file)`);
        rules.splice(at, 1);
        return `Removed: ${operand}`;
      }
      throw new Error(`/permissions: unknown action "${verb}"; ${USAGE}`);
    },
  };
}

function describe(session: Session, configured: Rule[], source: string): string {
  const lines = [`Permission mode: ${session.permissionMode}`];
  const added = sessionRules(session);
  const all: Array<[Rule, string]> = [...added.map((r): [Rule, string] => [r, 'this session']), ...configured.map((r): [Rule, string] => [r, source])];
  if (all.length === 0) lines.push('No rules: the mode decides (edit them with /permissions allow|ask|deny <rule>).');
  for (const kind of ['deny', 'ask', 'allow'] as const) {
    const of = all.filter(([r]) => r.kind === kind);
    if (of.length === 0) continue;
    lines.push(`${kind}:`);
    for (const [rule, from] of of) lines.push(`  ${rule.text}  (${from})`);
  }
  lines.push(USAGE);
  return lines.join('\n');
}
