/**
 * Reads a shell command for git commits and pushes that would land on a protected branch. A heuristic, not a
 * shell parser: the command is split at shell operators and each piece read word by word. Anything it cannot
 * read with certainty (a git command whose words are computed, `$(…)`, backticks) counts as touching the branch.
 */

/** git's options that take a value as the next word. */
const GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env']);

/** Words of one piece of a command, quotes removed; `null` for a word the shell computes. */
function words(piece) {
  const out = [];
  for (const match of piece.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) {
    const word = match[1] ?? match[2] ?? match[3];
    out.push(/[$`]/.test(match[1] ?? match[3] ?? '') ? null : word);
  }
  return out;
}

/** The pieces of a command line: split at `&&`, `||`, `;`, `|`, `&` and newlines; `$( )` and backticks opened up. */
function pieces(command) {
  const flat = command.replace(/\$\(|`|\)/g, ' ; ');
  return flat.split(/&&|\|\||[;|&\n]/).map((p) => p.trim()).filter(Boolean);
}

/** Words that run the rest of the line as a command. */
const WRAPPERS = new Set(['sudo', 'env', 'command', 'exec', 'nice', 'nohup', 'time', 'builtin']);

/**
 * The git subcommand (null when computed) and its arguments, after assignments, wrappers and git's global
 * options; undefined when this piece does not run git. A computed command name counts as git.
 */
function gitCall(argv) {
  let i = 0;
  while (i < argv.length && argv[i] !== null && (/^\w+=/.test(argv[i]) || WRAPPERS.has(argv[i]) || (i > 0 && WRAPPERS.has(argv[i - 1]) && argv[i].startsWith('-')))) i++;
  if (i >= argv.length) return undefined;
  if (argv[i] === null) return { sub: null, args: [] };
  if (!/(^|\/)git$/.test(argv[i])) return undefined;
  i++;
  while (i < argv.length && argv[i] !== null && argv[i].startsWith('-')) i += GLOBAL_WITH_VALUE.has(argv[i]) ? 2 : 1;
  if (i >= argv.length) return { sub: undefined, args: [] };
  return { sub: argv[i], args: argv.slice(i + 1) };
}

/** The destination branch of a push refspec (`main`, `HEAD:main`, `+feature:refs/heads/main`). */
function destination(refspec) {
  const target = refspec.includes(':') ? refspec.slice(refspec.lastIndexOf(':') + 1) : refspec.replace(/^\+/, '');
  return target.replace(/^refs\/heads\//, '');
}

/**
 * Why `command` must not run, or undefined when it may. `currentBranch()` is called only when the answer
 * depends on it (a commit, or a push without a refspec).
 */
export function judge(command, protectedBranches, currentBranch) {
  const isProtected = (branch) => protectedBranches.includes(branch);
  for (const piece of pieces(command)) {
    const call = gitCall(words(piece));
    if (!call || call.sub === undefined) continue;
    if (call.sub === null && /\b(push|commit)\b/.test(piece)) return 'this command runs a command or git subcommand computed at run time next to push/commit, so its target cannot be checked';
    if (call.sub === null) {
      if (/\bgit\b/.test(piece)) return 'this command runs git with words computed at run time, so it may commit or push to a protected branch';
      continue;
    }
    if (call.sub === 'commit') {
      const branch = currentBranch();
      if (branch === undefined || isProtected(branch)) return `committing on the protected branch ${branch ?? '(unknown)'} is not allowed; create a branch first (git switch -c <name>)`;
    }
    if (call.sub === 'push') {
      if (call.args.some((a) => a === null)) return 'this git push has words computed at run time, so its target cannot be checked';
      if (call.args.some((a) => a === '--all' || a === '--mirror')) return 'git push --all/--mirror would push protected branches';
      const refspecs = call.args.filter((a) => !a.startsWith('-')).slice(1);
      if (refspecs.length === 0) {
        const branch = currentBranch();
        if (branch === undefined || isProtected(branch)) return `pushing the protected branch ${branch ?? '(unknown)'} is not allowed; push a feature branch and open a pull request`;
      }
      const hit = refspecs.map(destination).find((b) => isProtected(b) || (b === 'HEAD' && isProtected(currentBranch() ?? b)));
      if (hit) return `pushing to the protected branch ${hit === 'HEAD' ? currentBranch() : hit} is not allowed; push a feature branch and open a pull request`;
    }
  }
  return undefined;
}
