/**
 * Every process a tool starts ends with Keel. Process groups and /proc parentage are not enough: a command that
 * double-forks into a new session (`setsid`, daemonize) is re-parented to init and leaves both. So each process
 * a tool starts carries a tag in its environment (`KEEL_PROCESS_TAGS`), which the kernel copies into every
 * descendant and which `/proc/<pid>/environ` shows whatever the process does to its session, group or parent.
 * At exit Keel finds the processes of this user that carry its tag and kills them (stopping them first, so none
 * forks away while the others are killed). A file in `$KEEL_HOME/processes/` records Keel's pid and start time
 * while tagged processes may run: when Keel is killed with SIGKILL, the next start (or `/bashes`) finds the
 * record of a Keel that is gone and ends its survivors. Recycled pids are never hit: a process is killed only
 * when it carries the tag, and only if its start time is the one read with the tag.
 *
 * What a tag cannot hold: a process that both leaves the tree and execs with an emptied environment
 * (`env -i setsid …`). The sandbox closes that (each command runs in its own PID namespace, which nothing
 * leaves); without it, the README says so plainly.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const TAG_VARIABLE = 'KEEL_PROCESS_TAGS';

/** The tags a process carries (those of the Keels that started it, a sub-agent's parent's too). */
function tagsOf(environ: string): string[] {
  for (const entry of environ.split('\0')) if (entry.startsWith(`${TAG_VARIABLE}=`)) return entry.slice(TAG_VARIABLE.length + 1).split(',');
  return [];
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot; undefined when gone. */
export function startTime(pid: number | 'self'): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19];
}

interface Found {
  pid: number;
  start: string;
}

/** This user's processes (other than Keel itself) carrying one of `tags`, with their start times. */
export function findTagged(tags: ReadonlySet<string>): Found[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: Found[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    const start = startTime(pid);
    if (start === undefined) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue; // another user's process, or gone
    }
    if (tagsOf(environ).some((t) => tags.has(t))) found.push({ pid, start });
  }
  return found;
}

function signal(p: Found, sig: NodeJS.Signals): void {
  // The pid must still be the process read with the tag.
  if (startTime(p.pid) !== p.start) return;
  try {
    process.kill(p.pid, sig);
  } catch {
    // gone, or not ours
  }
}

/**
 * Kills every process carrying one of `tags`: stops them all (a stopped process cannot fork), looks again until
 * no new one appears, then kills them. Synchronous, so it runs in a process 'exit' listener. Returns how many.
 */
export function reapTagged(tags: ReadonlySet<string>): number {
  if (process.platform !== 'linux' || tags.size === 0) return 0;
  const seen = new Map<string, Found>();
  for (let round = 0; round < 50; round++) {
    const fresh = findTagged(tags).filter((p) => !seen.has(`${p.pid}:${p.start}`));
    if (fresh.length === 0) break;
    for (const p of fresh) {
      seen.set(`${p.pid}:${p.start}`, p);
      signal(p, 'SIGSTOP');
    }
  }
  for (const p of seen.values()) signal(p, 'SIGKILL');
  return seen.size;
}

interface Record_ {
  pid: number;
  start: string;
  tag: string;
}

const recordDir = (keelHome: string) => path.join(keelHome, 'processes');

/**
 * Ends the survivors of Keels that are gone (killed with SIGKILL, so their exit listener never ran): each
 * record whose Keel pid no longer runs with the recorded start time. Returns how many processes it killed.
 */
export function settleStale(keelHome: string): number {
  const dir = recordDir(keelHome);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let killed = 0;
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const file = path.join(dir, name);
    let rec: Partial<Record_>;
    try {
      rec = JSON.parse(readFileSync(file, 'utf8')) as Partial<Record_>;
    } catch {
      rmSync(file, { force: true });
      continue;
    }
    if (typeof rec.pid !== 'number' || typeof rec.tag !== 'string' || typeof rec.start !== 'string') {
      rmSync(file, { force: true });
      continue;
    }
    if (startTime(rec.pid) === rec.start) continue; // that Keel still runs
    killed += reapTagged(new Set([rec.tag]));
    rmSync(file, { force: true });
  }
  return killed;
}

/** The tags in use in this process; a process-wide exit listener ends them all. */
const armed = new Set<ProcessTag>();
const endArmed = () => {
  for (const tag of armed) tag.end();
};

/** One Keel's tag: handed to every process its tools start, recorded while they may run, reaped at exit. */
export class ProcessTag {
  readonly tag = `keel-${process.pid}-${randomBytes(8).toString('hex')}`;
  private recorded?: string;
  private listening = false;

  constructor(private readonly keelHome: string | undefined) {}

  /**
   * The variables a spawned process gets: the tags of the Keels above this one (a sub-agent's parent), this
   * Keel's, and `extra` (a shell's own, so kill_shell finds what that shell left behind).
   */
  env(extra?: string): Record<string, string> {
    this.arm();
    const inherited = (process.env[TAG_VARIABLE] ?? '').split(',').filter(Boolean);
    return { [TAG_VARIABLE]: [...inherited, this.tag, ...(extra ? [extra] : [])].join(',') };
  }

  /** A sub-tag for one shell or server (`<tag>/<name>`). */
  sub(name: string): string {
    return `${this.tag}/${name}`;
  }

  /** Kills every process started under this Keel's tag (or only `sub`'s). */
  reap(sub?: string): number {
    return reapTagged(new Set([sub ?? this.tag]));
  }

  /** Kills what runs under this tag and drops its record (at Keel's exit). */
  end(): void {
    this.reap();
    if (this.recorded) rmSync(this.recorded, { force: true });
  }

  private arm(): void {
    if (this.listening) return;
    this.listening = true;
    armed.add(this);
    // One listener for the process, however many kernels a host makes (an SDK host may make hundreds). Looked up
    // on `process`, not kept in a module flag: a flag restored from the binary's start-up snapshot would say
    // "installed" in a process that never installed it.
    if (!process.listeners('exit').includes(endArmed)) process.on('exit', endArmed);
    if (!this.keelHome) return;
    const start = startTime('self');
    if (start === undefined) return;
    try {
      mkdirSync(recordDir(this.keelHome), { recursive: true, mode: 0o700 });
      const file = path.join(recordDir(this.keelHome), `${this.tag}.json`);
      writeFileSync(file, JSON.stringify({ pid: process.pid, start, tag: this.tag } satisfies Record_), { mode: 0o600 });
      this.recorded = file;
    } catch {
      // A read-only KEEL_HOME: the exit listener still reaps; only a SIGKILL of Keel goes unsettled.
    }
  }
}
