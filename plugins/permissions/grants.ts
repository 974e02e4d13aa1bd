/**
 * The `session-permissions` service: what other plugins may add to one session's policy, and no more.
 * - `allow`: allow rules (a skill's or a command's `allowed-tools`). They join the session's rules, which are
 *   weighed deny → ask → allow like every other rule, so an added allow never overrides a deny or an ask rule.
 * - `deny`: deny rules (the user's "Deny, and don't ask again"). `/permissions` lists them with the session's
 *   other rules and `/permissions remove` lifts them. `denies` says whether a bare session deny rule covers a tool.
 * - `addReadable`: a folder whose files read-level tools may read without asking (a skill's bundled files).
 *   It counts as inside the project for reads only; writes there are judged as before, and deny rules and the
 *   settings surface's secrets still apply.
 */
import type { Session } from '../../kernel/index.js';
import { sessionRules } from './command.js';
import { resolveReal } from './paths.js';
import { isBare, parseRule, toolMatches, type Rule } from './rules.js';

const READABLE = 'permissions:readable-roots';

export interface SessionPermissions {
  /** Adds allow rules for this session; throws a one-line error naming `source` and the bad rule. Returns a remover. */
  allow(session: Session, rules: string[], source: string): () => void;
  /** Adds deny rules for this session, shown and removable by `/permissions`; returns a remover. */
  deny(session: Session, rules: string[], source: string): () => void;
  /** Whether a session deny rule covers every call of the tool. */
  denies(session: Session, toolName: string): boolean;
  /** Makes a folder readable (read-level tools only) for this session. */
  addReadable(session: Session, dir: string): void;
}

export function readableRoots(session: Session): string[] {
  let roots = session.data.get(READABLE) as string[] | undefined;
  if (!roots) {
    roots = [];
    session.data.set(READABLE, roots);
  }
  return roots;
}

function addRules(session: Session, parsed: Rule[]): () => void {
  const rules = sessionRules(session);
  rules.push(...parsed);
  return () => {
    for (const rule of parsed) {
      const at = rules.indexOf(rule);
      if (at !== -1) rules.splice(at, 1);
    }
  };
}

export const sessionPermissions: SessionPermissions = {
  allow(session, texts, source) {
    return addRules(session, texts.map((text, i) => parseRule('allow', text, `${source}: allowed-tools[${i}]`)));
  },
  deny(session, texts, source) {
    return addRules(session, texts.map((text) => parseRule('deny', text, source)));
  },
  denies(session, toolName) {
    return sessionRules(session).some((rule) => rule.kind === 'deny' && isBare(rule) && toolMatches(rule, toolName));
  },
  addReadable(session, dir) {
    const real = resolveReal(dir);
    const roots = readableRoots(session);
    if (!roots.includes(real)) roots.push(real);
  },
};
