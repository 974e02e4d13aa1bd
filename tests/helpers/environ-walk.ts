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
