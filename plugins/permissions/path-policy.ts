/**
 * The `path-policy` service: lets tools that read many files at once (grep, glob, ls in tools-fs) leave out
 * what a single read of the file would not get without asking — paths a deny rule of a reading tool names, and
 * the secrets of the settings surface (`$KEEL_HOME`, `~/.ssh`).
 */
import { savedOutputDir, type Session } from '../../kernel/index.js';
import { protectedReason, resolveReal, type PathContext } from './paths.js';
import { pathPatternMatches, toolMatches, type Rule } from './rules.js';

export interface PathPolicy {
  /** Why the file at `abs` may not be shown by a tool that reads many files, or undefined. */
  hidden(abs: string, session: Session): string | undefined;
}

const READ_TOOLS = ['read_file', 'grep', 'glob', 'ls'];

export function pathPolicy(rules: Rule[], base: Omit<PathContext, 'root'>): PathPolicy {
  const denies = rules.filter((r) => r.kind === 'deny' && r.specifier !== undefined && READ_TOOLS.some((t) => toolMatches(r, t)));
  return {
    hidden(abs, session) {
      const resolved = resolveReal(abs);
      const ctx = { ...base, root: resolveReal(session.projectRoot), savedOutputs: base.keelHome ? savedOutputDir(base.keelHome, session.id) : undefined };
      const denied = denies.find((r) => pathPatternMatches(r.specifier!, resolved, ctx));
      if (denied) return `the rule "${denied.text}" denies reading it`;
      return protectedReason(resolved, 'read', ctx);
    },
  };
}
