/**
 * The shell guard: a speed bump that always denies a few catastrophic commands (`rm -rf /` and kin), in every
 * mode. It is not the security boundary — in `ask` mode no shell command runs without a rule or the user.
 * Targets are normalised before they are judged: `$HOME`, `${HOME}`, `~`, `~user`, `.`/`..` segments, `//`,
 * trailing slashes and a trailing `/*` all reduce to the folder they stand for.
 */
import path from 'node:path';
import { invocations, programName } from './programs.js';
import type { ShellAnalysis, SimpleCommand, WordInfo } from './shell.js';

const SYSTEM_DIRS = ['bin', 'boot', 'dev', 'etc', 'home', 'lib', 'lib32', 'lib64', 'opt', 'proc', 'root', 'sbin', 'srv', 'sys', 'usr', 'var', 'Users', 'System', 'Library', 'Applications', 'private'];

export interface GuardContext {
  /** The home folder `~` and `$HOME` stand for. */
  home: string;
  /** The folder relative targets resolve against (the shell's working folder). */
  cwd: string;
}

function isWithin(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/** The folder a target word names, normalised; undefined when it is computed. `~user` names a home folder. */
function normalise(word: WordInfo, ctx: GuardContext): string | undefined {
  // The parser leaves another user's `~bob` with no path (bash expands it at run time); its text says which.
  let p = word.path ?? (word.text !== null && word.text.startsWith('~') ? word.text : null);
  if (p === null) return undefined;
  const tildeUser = /^~([a-z_][a-z0-9_.-]*)(\/.*)?$/i.exec(p);
  if (tildeUser) p = `${tildeUser[1] === 'root' ? '/root' : `/home/${tildeUser[1]}`}${tildeUser[2] ?? ''}`;
  else if (p === '~' || p.startsWith('~/')) p = ctx.home + p.slice(1);
  // `dir/*`, `dir/.*` and `dir/{*,.*}` stand for everything in dir.
  p = p.replace(/\/(\*|\.\*|\.\[!.\]\*|\.\?\*)$/, '/') || '/';
  if (word.glob && /[*?[]/.test(p)) p = path.dirname(p);
  return path.resolve(ctx.cwd, p);
}

/** Folders whose recursive removal (or chmod/chown) wrecks the machine or a home folder. */
function isCritical(resolved: string, ctx: GuardContext): boolean {
  if (resolved === '/') return true;
  const segments = resolved.split('/').filter(Boolean);
  if (segments.length === 1 && SYSTEM_DIRS.includes(segments[0])) return true;
  if (segments.length === 2 && ['home', 'Users'].includes(segments[0])) return true;
  // The home folder and every folder above it.
  return isWithin(ctx.home, resolved);
}

function hasRecursive(args: WordInfo[]): boolean {
  return args.some((a) => a.text !== null && (a.text === '--recursive' || /^-[a-zA-Z]*[rR][a-zA-Z]*$/.test(a.text)));
}

const RAW_DISK = /^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk)/;
const REMOVERS = new Set(['rm', 'shred', 'unlink', 'rmdir']);

function checkInvocation(words: WordInfo[], ctx: GuardContext): string | undefined {
  const name = programName(words[0]?.text);
  if (name === undefined) return undefined;
  const args = words.slice(1);
  const operands = args.filter((a) => a.text === null || !a.text.startsWith('-'));
  const critical = (list: WordInfo[]) => list.find((a) => {
    const p = normalise(a, ctx);
    return p !== undefined && isCritical(p, ctx);
  });
  if (name === 'rm') {
    if (args.some((a) => a.text === '--no-preserve-root')) return 'removes with --no-preserve-root';
    const target = hasRecursive(args) ? critical(operands) : undefined;
    if (target) return `recursively removes ${target.path ?? target.text} (${normalise(target, ctx)})`;
  }
  if (name === 'find') {
    const starts: WordInfo[] = [];
    for (const a of args) {
      if (a.text !== null && (a.text.startsWith('-') || a.text === '(' || a.text === '!')) break;
      starts.push(a);
    }
    const target = critical(starts.length > 0 ? starts : [{ text: '.', path: '.', glob: false }]);
    const execs = invocations(words).filter((inv) => inv.via.startsWith('find'));
    const destructive = args.some((a) => a.text === '-delete') || execs.some((inv) => {
      const inner = programName(inv.words[0]?.text);
      return inner === undefined || REMOVERS.has(inner) || ['sh', 'bash', 'dash', 'zsh', 'xargs'].includes(inner);
    });
    if (target && destructive) return `deletes everything under ${target.path ?? target.text}`;
  }
  if (name === 'mv') {
    const target = critical(operands.slice(0, -1));
    if (target) return `moves ${target.path ?? target.text} away`;
  }
  if (/^mkfs(\..+)?$/.test(name) || name === 'mke2fs' || name === 'wipefs') return `formats a file system (${name})`;
  if (name === 'dd' && args.some((a) => a.text !== null && a.text.startsWith('of=') && RAW_DISK.test(a.text.slice(3)))) return 'overwrites a raw disk with dd';
  if (name === 'shred' && operands.some((a) => a.text !== null && RAW_DISK.test(a.text))) return 'shreds a raw disk';
  if ((name === 'chmod' || name === 'chown' || name === 'chgrp') && hasRecursive(args)) {
    const target = critical(operands.slice(1));
    if (target) return `recursively changes ownership or modes of ${target.path ?? target.text}`;
  }
  return undefined;
}

function checkCommand(cmd: SimpleCommand, ctx: GuardContext): string | undefined {
  for (const r of cmd.redirects) {
    if (r.target && RAW_DISK.test(r.target) && r.op.includes('>')) return `writes to the raw disk ${r.target}`;
  }
  for (const inv of invocations(cmd.words)) {
    const why = checkInvocation(inv.words, ctx);
    if (why) return why;
  }
  return undefined;
}

/** Raw-text patterns, for commands the parser could not read or that hide their words in expansions. */
const RAW_PATTERNS: Array<[RegExp, string]> = [
  [/\brm\s+(?:-\S+\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S+\s+)*["']?(?:\/|\/\*|~\/?|\$HOME|\$\{HOME\})["']?\/?(?:\s|$|;|&|\|)/, 'recursively removes / or the home directory'],
  [/\brm\s+(?:-\S+\s+)*--no-preserve-root\b/, 'removes with --no-preserve-root'],
  [/:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;?\s*:/, 'is a fork bomb'],
  [/\b(\w+)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}/, 'is a fork bomb'],
  [/\bmkfs(\.\w+)?\s/, 'formats a file system'],
  [/\bdd\b[^|;&]*\bof=\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk)/, 'overwrites a raw disk with dd'],
];

/** Returns why `command` is blocked outright, or undefined. */
export function catastrophic(command: string, analysis: ShellAnalysis, ctx: GuardContext): string | undefined {
  if (analysis.ok) {
    // Every folder a `cd` may have led to so far (subshells do not carry it over; keeping all is the safe side).
    const cwds = new Set([ctx.cwd]);
    for (const cmd of analysis.commands) {
      for (const cwd of cwds) {
        const why = checkCommand(cmd, { ...ctx, cwd });
        if (why) return why;
      }
      const name = programName(cmd.words[0]?.text);
      const target = name === 'cd' && cmd.words.length === 1 ? { text: '~', path: ctx.home, glob: false } : cmd.words[1];
      if ((name === 'cd' || name === 'pushd') && target) {
        for (const cwd of [...cwds]) {
          const folder = normalise(target, { ...ctx, cwd });
          if (folder) cwds.add(folder);
        }
      }
    }
  }
  for (const [pattern, why] of RAW_PATTERNS) if (pattern.test(command)) return why;
  return undefined;
}
