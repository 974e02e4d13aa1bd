/**
 * The `session-permissions` service: what other plugins may add to one session's policy, and no more.
 * - `allow`: allow rules (a skill's or a command's `allowed-tools`). They join the session's rules, which are
 *   weighed deny → ask → allow like every other rule, so an added allow never overrides a deny or an ask rule.
 * - `addReadable`: a folder whose files read-level tools may read without asking (a skill's bundled files).
 *   It counts as inside the project for reads only; writes there are judged as before, and deny rules and the
 *   settings surface's secrets still apply.
 */
import type { Session } from '../../kernel/index.js';
import { sessionRules } from './command.js';
import { resolveReal } from './paths.js';
import { parseRule } from './rules.js';

const READABLE = 'permissions:readable-roots';

export interface SessionPermissions {
  /** Adds allow rules for this session; throws a one-line error naming `source` and the bad rule. Returns a remover. */
  allow(session: Session, rules: string[], source: string): () => void;
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

export const sessionPermissions: SessionPermissions = {
  allow(session, texts, source) {
    const parsed = texts.map((text, i) => parseRule('allow', text, `${source}: allowed-tools[${i}]`));
    const rules = sessionRules(session);
    rules.push(...parsed);
    return () => {
      for (const rule of parsed) {
        const at = rules.indexOf(rule);
        if (at !== -1) rules.splice(at, 1);
      }
    };
  },
  addReadable(session, dir) {
    const real = resolveReal(dir);
    const roots = readableRoots(session);
    if (!roots.includes(real)) roots.push(real);
  },
};
