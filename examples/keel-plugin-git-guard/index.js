import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { definePlugin, Stage } from 'keel';
import { judge } from './judge.js';

/** The branch checked out in `cwd`, or undefined when git cannot tell (not a repository, detached HEAD). */
function currentBranch(cwd) {
  try {
    const name = execFileSync('git', ['rev-parse', '--abbrev-ref', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return name && name !== 'HEAD' ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Denies `bash` calls that commit on or push to a protected branch, before the permission policy is asked,
 * and tells the model why so it can take another way (a feature branch and a pull request).
 */
export default definePlugin((options = {}) => {
  const branches = options.branches ?? ['main', 'master'];
  return {
    name: 'git-guard',
    version: '1.0.0',
    kernel: '^1.0.0',
    apply(kernel) {
      kernel.hooks.prePermission.tapPromise({ name: 'git-guard', stage: Stage.EARLY }, async (call, turn) => {
        if (call.name !== 'bash') return undefined;
        const input = call.input ?? {};
        const command = typeof input.command === 'string' ? input.command : '';
        const cwd = typeof input.workdir === 'string' ? path.resolve(turn.session.cwd, input.workdir) : turn.session.cwd;
        const why = judge(command, branches, () => currentBranch(cwd));
        return why ? { behavior: 'deny', reason: `Permission denied by git-guard: ${why}` } : undefined;
      });
    },
  };
});
