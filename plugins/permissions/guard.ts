/**
 * The shell guard: a speed bump that always denies a few catastrophic commands (`rm -rf /` and kin), in every
 * mode. It is not the security boundary — in `ask` mode no shell command runs without a rule or the user.
 */
import { unwrapCommand, type ShellAnalysis, type SimpleCommand } from './shell.js';

const SYSTEM_DIRS = ['bin', 'boot', 'dev', 'etc', 'home', 'lib', 'lib32', 'lib64', 'opt', 'proc', 'root', 'sbin', 'srv', 'sys', 'usr', 'var'];

/** Targets whose recursive removal (or chmod/chown) wrecks the machine or the user's home. */
function isCriticalTarget(target: string): boolean {
  const t = target.replace(/\/+$/, '') || '/';
  if (t === '/' || t === '/*' || t === '/.' || t === '/..') return true;
  if (t === '~' || t === '~/*' || t === '~/.' || t === '$HOME' || t === '${HOME}') return true;
  const top = /^\/([^/]+)(?:\/\*)?$/.exec(t);
  return Boolean(top && SYSTEM_DIRS.includes(top[1]));
}

function hasRecursive(args: Array<string | null>): boolean {
  return args.some((a) => a !== null && (a === '--recursive' || /^-[a-zA-Z]*[rR][a-zA-Z]*$/.test(a)));
}

function checkCommand(cmd: SimpleCommand): string | undefined {
  const argv = unwrapCommand(cmd.argv);
  const head = argv[0];
  for (const r of cmd.redirects) {
    if (r.target && /^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk)/.test(r.target) && r.op.includes('>')) return `writes to the raw disk ${r.target}`;
  }
  if (head === null || head === undefined) return undefined;
  const name = head.split('/').pop() ?? head;
  const args = argv.slice(1);
  const literal = args.filter((a): a is string => a !== null);
  if (name === 'rm' && hasRecursive(args)) {
    const target = literal.find((a) => !a.startsWith('-') && isCriticalTarget(a));
    if (target) return `recursively removes ${target}`;
    if (literal.includes('--no-preserve-root')) return 'removes with --no-preserve-root';
  }
  if (name === 'find') {
    const start = literal.find((a) => !a.startsWith('-'));
    const destructive = literal.includes('-delete') || (literal.includes('-exec') && literal.some((a) => a === 'rm' || a.endsWith('/rm')));
    if (start && isCriticalTarget(start) && destructive) return `deletes everything under ${start}`;
  }
  if (/^mkfs(\..+)?$/.test(name) || name === 'mke2fs' || name === 'wipefs') return `formats a file system (${name})`;
  if (name === 'dd' && literal.some((a) => /^of=\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk)/.test(a))) return 'overwrites a raw disk with dd';
  if ((name === 'chmod' || name === 'chown' || name === 'chgrp') && hasRecursive(args)) {
    const target = literal.find((a, i) => i > 0 && isCriticalTarget(a));
    if (target) return `recursively changes ownership or modes of ${target}`;
  }
  return undefined;
}

/** Raw-text patterns, for commands the parser could not read or that hide their words in expansions. */
const RAW_PATTERNS: Array<[RegExp, string]> = [
  [/\brm\s+(?:-\S+\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S+\s+)*["']?(?:\/|\/\*|~\/?|\$HOME|\$\{HOME\})["']?(?:\s|$|;|&|\|)/, 'recursively removes / or the home directory'],
  [/\brm\s+(?:-\S+\s+)*--no-preserve-root\b/, 'removes with --no-preserve-root'],
  [/:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;?\s*:/, 'is a fork bomb'],
  [/\b(\w+)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}/, 'is a fork bomb'],
  [/\bmkfs(\.\w+)?\s/, 'formats a file system'],
  [/\bdd\b[^|;&]*\bof=\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk)/, 'overwrites a raw disk with dd'],
];

/** Returns why `command` is blocked outright, or undefined. */
export function catastrophic(command: string, analysis: ShellAnalysis): string | undefined {
  if (analysis.ok) {
    for (const cmd of analysis.commands) {
      const why = checkCommand(cmd);
      if (why) return why;
    }
  }
  for (const [pattern, why] of RAW_PATTERNS) if (pattern.test(command)) return why;
  return undefined;
}
