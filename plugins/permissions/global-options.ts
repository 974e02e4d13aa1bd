/**
 * Programs whose own options come before a subcommand (`git -C dir push`, `npm --prefix x publish`,
 * `docker -H host run`): the forms of a command with those options taken out, so that a deny or ask rule such as
 * `bash(git push:*)` holds however many global options precede the subcommand.
 */
import type { ShellWord } from './shell.js';

/** git's global options that take the next word as their value (git(1)); every other `-…` word is a flag. */
const GIT_VALUED = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix', '--attr-source']);

/** Programs whose option syntax is open-ended (any `--key value`): every split is tried, the safe side for a deny. */
const OPEN_ENDED = new Set(['npm', 'pnpm', 'yarn', 'bun', 'docker', 'podman', 'kubectl', 'helm', 'cargo', 'gh', 'terraform']);

/**
 * The argv's other readings as `[program, subcommand, …rest]`, one per way its leading options may end (none when
 * no option precedes the subcommand). `words[0]` is the program's bare name.
 */
export function withoutGlobalOptions(words: ShellWord[]): ShellWord[][] {
  const name = words[0];
  if (name === null || name === undefined) return [];
  if (name === 'git') return gitForms(words);
  if (OPEN_ENDED.has(name)) return openEndedForms(words);
  return [];
}

function gitForms(words: ShellWord[]): ShellWord[][] {
  let i = 1;
  while (i < words.length) {
    const w = words[i];
    // A computed word could be an option or the subcommand; the caller asks about computed programs already.
    if (w === null || !w.startsWith('-') || w === '-') break;
    if (w === '--') {
      i++;
      break;
    }
    i += GIT_VALUED.has(w) ? 2 : 1;
  }
  return i > 1 && i < words.length ? [[words[0], ...words.slice(i)]] : [];
}

function openEndedForms(words: ShellWord[]): ShellWord[][] {
  const out: ShellWord[][] = [];
  // Word i may start the subcommand while every word before it is an option or could be the value of the one before.
  let afterOption = false;
  for (let i = 1; i < words.length; i++) {
    const w = words[i];
    if (w !== null && w.startsWith('-') && w !== '-') {
      afterOption = !w.includes('=');
      continue;
    }
    if (i > 1 && w !== null) out.push([words[0], ...words.slice(i)]);
    if (!afterOption) break;
    afterOption = false;
  }
  return out;
}
