/** The effects of `git`: global options that run code or change folders, and subcommands that write or run. */
import { has, parseArgs, slice, UNKNOWN, values } from './args.js';
import { word, type Effects } from './effect-kit.js';
import type { WordInfo } from './shell.js';

export function gitEffects(args: WordInfo[], fx: Effects): void {
  let i = 0;
  // Global options before the subcommand.
  for (; i < args.length; i++) {
    const w = args[i].text;
    if (w === null) {
      fx.runs.push('git gets a computed option');
      return;
    }
    if (!w.startsWith('-')) break;
    const [flag] = w.split('=');
    const value = w.includes('=') ? slice(args[i], w.indexOf('=') + 1) : undefined;
    if (flag === '-C') fx.workIn.push(args[++i] ?? UNKNOWN);
    else if (flag === '-c' || flag === '--config-env') {
      fx.runs.push(`git ${flag} sets configuration that can run programs`);
      if (!value) i++;
    } else if (flag === '--git-dir' || flag === '--work-tree' || flag === '--exec-path' || flag === '--namespace' || flag === '--super-prefix') {
      if (flag !== '--namespace') fx.runs.push(`git ${flag} points git at other code or configuration`);
      if (!value && flag !== '--exec-path') i++;
    }
  }
  const sub = args[i]?.text;
  const rest = args.slice(i + 1);
  if (sub === undefined) return;
  if (sub === null) {
    fx.runs.push('git runs a computed subcommand');
    return;
  }
  const parsed = parseArgs(rest, { long: ['--output', '--file', '--blob', '--exec', '--extcmd', '--upload-pack', '--receive-pack', '--config', '--template', '--separate-git-dir', '--output-directory'] });
  const opt = (n: string) => has(parsed, n);
  for (const out of values(parsed, '--output')) fx.writes.push({ word: out });
  if (READS_OBJECTS.has(sub)) fx.reads.push(...rest.map(objectPath).filter((w): w is WordInfo => w !== undefined));
  if (sub === 'grep' || sub === 'archive') fx.recursiveReads.push(...treeReads(sub, rest, parsed.operands));
  switch (sub) {
    case 'config': {
      const readOnly = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '-l', '--get-color', '--get-colorbool', '--show-origin', '--show-scope'].some(opt) || ['get', 'list'].includes(parsed.operands[0]?.text ?? '');
      if (readOnly) break;
      const file = rest.findIndex((w) => w.text === '-f' || w.text === '--file');
      const fileEq = rest.find((w) => w.text?.startsWith('--file='));
      if (file !== -1) fx.writes.push({ word: rest[file + 1] ?? UNKNOWN });
      else if (fileEq) fx.writes.push({ word: slice(fileEq, 7) });
      else if (opt('--global')) fx.writes.push({ word: word('~/.gitconfig') });
      else if (opt('--system')) fx.writes.push({ word: word('/etc/gitconfig') });
      else fx.writes.push({ word: word('.git/config') });
      break;
    }
    case 'diff':
    case 'log':
    case 'show':
    case 'whatchanged':
    case 'range-diff':
    case 'diff-tree':
    case 'diff-files':
    case 'diff-index':
    case 'format-patch': {
      if (opt('--ext-diff')) fx.runs.push(`git ${sub} --ext-diff runs an external diff program`);
      if (sub === 'format-patch') {
        const dir = rest.findIndex((w) => w.text === '-o');
        if (dir !== -1) fx.writes.push({ word: rest[dir + 1] ?? UNKNOWN, recursive: true });
        for (const d of values(parsed, '--output-directory')) fx.writes.push({ word: d, recursive: true });
      }
      break;
    }
    case 'difftool':
    case 'mergetool':
      fx.runs.push(`git ${sub} runs an external tool`);
      break;
    case 'grep':
      if (opt('-O') || opt('--open-files-in-pager')) fx.runs.push('git grep -O runs a pager');
      break;
    case 'rebase':
      if (opt('-x') || opt('--exec')) fx.runs.push('git rebase --exec runs commands');
      break;
    case 'bisect':
      if (parsed.operands[0]?.text === 'run') fx.runs.push('git bisect run runs commands');
      break;
    case 'submodule':
      if (parsed.operands.some((w) => w.text === 'foreach')) fx.runs.push('git submodule foreach runs commands');
      break;
    case 'filter-branch':
    case 'filter-repo':
      fx.runs.push(`git ${sub} runs filters`);
      break;
    case 'clone':
    case 'fetch':
    case 'pull':
    case 'ls-remote':
    case 'push':
    case 'archive':
      if (opt('-u') || opt('--upload-pack') || opt('--receive-pack') || opt('--exec') || opt('-c') || opt('--config') || opt('--template')) fx.runs.push(`git ${sub} is given a program or configuration to run`);
      if (sub === 'archive') {
        const o = rest.findIndex((w) => w.text === '-o');
        if (o !== -1) fx.writes.push({ word: rest[o + 1] ?? UNKNOWN });
      }
      if (sub === 'clone' && parsed.operands[1]) fx.writes.push({ word: parsed.operands[1], recursive: true, operand: true });
      break;
    case 'worktree':
      if (parsed.operands[0]?.text === 'add' && parsed.operands[1]) fx.writes.push({ word: parsed.operands[1], recursive: true, operand: true });
      break;
    case 'init':
      if (opt('--template') || opt('--separate-git-dir')) fx.runs.push(`git init ${opt('--template') ? '--template' : '--separate-git-dir'} copies hooks or config from elsewhere`);
      break;
    case 'hook':
      fx.runs.push('git hook runs hooks');
      break;
    default:
      break;
  }
}

/** Subcommands that print what a `<rev>:<path>` names. */
const READS_OBJECTS = new Set(['show', 'cat-file', 'diff', 'log', 'blame', 'grep', 'archive', 'ls-tree', 'difftool', 'checkout', 'restore']);

/** The path of a `<rev>:<path>` (or `:<path>`, `:0:<path>`) word: a file's content as git stores it. */
function objectPath(arg: WordInfo): WordInfo | undefined {
  const w = arg.text;
  if (w === null || w.startsWith('-') || w.includes('://')) return undefined;
  const match = /^[^:]*:(?:[0-3]:)?(.+)$/s.exec(w);
  if (!match) return undefined;
  return slice(arg, w.length - match[1].length);
}

/** What `git grep` and `git archive` read: the paths they are given, else the whole tree. */
function treeReads(sub: string, rest: WordInfo[], operands: WordInfo[]): WordInfo[] {
  const dashes = rest.findIndex((w) => w.text === '--');
  const paths = dashes !== -1 ? rest.slice(dashes + 1) : sub === 'archive' ? operands.slice(1) : [];
  return paths.length > 0 ? paths : [word('.')];
}
