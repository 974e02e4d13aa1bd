/**
 * What grep, glob and ls leave out of their results: the `path-policy` service (from the permissions plugin,
 * when loaded) names files a deny rule or the settings surface keeps from being read.
 */
import type { Session, ToolContext } from '../../kernel/index.js';

interface PathPolicy {
  hidden(abs: string, session: Session): string | undefined;
}

/** A filter for result paths; keeps everything when no plugin provides the service. */
export function hiddenFilter(ctx: Pick<ToolContext, 'kernel' | 'session'>): { hides(abs: string): boolean; note(noun: string): string; count(): number } {
  const service = ctx.kernel.services.get('path-policy') as Partial<PathPolicy> | undefined;
  let count = 0;
  return {
    hides(abs) {
      if (typeof service?.hidden !== 'function') return false;
      const why = service.hidden(abs, ctx.session);
      if (why) count++;
      return why !== undefined;
    },
    count: () => count,
    note: (noun) => (count > 0 ? `[${count} ${noun} left out: the permission rules or the protected paths forbid reading ${count === 1 ? 'it' : 'them'}.]` : ''),
  };
}
