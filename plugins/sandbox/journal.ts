/**
 * A journal of sandboxed commands not yet checked: one file per command in `$KEEL_HOME/sandbox-runs/`, written
 * before it starts and removed once the check after it ran. A Keel killed with SIGKILL never runs that check;
 * the next Keel's sandbox settles what such a run left (before it runs a command of its own): it removes the
 * placeholders, removes protected paths created since, and names protected paths changed or removed since.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ProtectedPaths } from '../../kernel/index.js';
import { removePlaceholder } from './placeholders.js';
import { survey, type Guarded } from './survey.js';

interface Entry {
  pid: number;
  /** Keel's start time (field 22 of /proc/<pid>/stat), so a recycled pid is not taken for it. */
  start: string;
  root: string;
  roots: string[];
  placeholders: string[];
  /** The protected paths before the command: kind, inode, size and mtime. */
  before: Array<[string, string, number, number, number]>;
}

function startTime(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

const dirOf = (keelHome: string) => path.join(keelHome, 'sandbox-runs');

/** Records a command about to start; returns a function that removes the record once it was checked. */
export function journal(keelHome: string, run: { root: string; roots: string[]; placeholders: string[]; before: Map<string, Guarded> }): () => void {
  const start = startTime('self');
  if (!keelHome || start === undefined) return () => undefined;
  const entry: Entry = {
    pid: process.pid,
    start,
    root: run.root,
    roots: run.roots,
    placeholders: run.placeholders,
    before: [...run.before].map(([p, g]) => [p, g.kind, g.ino, g.size, g.mtimeMs]),
  };
  const file = path.join(dirOf(keelHome), `${process.pid}-${randomBytes(6).toString('hex')}.json`);
  try {
    mkdirSync(dirOf(keelHome), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify(entry), { mode: 0o600 });
  } catch {
    return () => undefined;
  }
  return () => rmSync(file, { force: true });
}

/**
 * Placeholders that sandboxed commands of other Keels still running hold (a sub-agent's, a second session's):
 * an empty folder of theirs is neither this command's doing nor this command's to remove.
 */
export function heldByOthers(keelHome: string): Set<string> {
  const held = new Set<string>();
  let names: string[];
  try {
    names = readdirSync(dirOf(keelHome)).filter((n) => n.endsWith('.json') && !n.startsWith(`${process.pid}-`));
  } catch {
    return held;
  }
  for (const name of names) {
    try {
      const entry = JSON.parse(readFileSync(path.join(dirOf(keelHome), name), 'utf8')) as Entry;
      if (startTime(entry.pid) === entry.start) for (const p of entry.placeholders ?? []) held.add(p);
    } catch {
      // being written or removed: skip
    }
  }
  return held;
}

/** Settles the runs of Keels that are gone; returns one line per thing done or found, for the log. */
export function settle(keelHome: string, surface: ProtectedPaths): string[] {
  let names: string[];
  try {
    names = readdirSync(dirOf(keelHome)).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const lines: string[] = [];
  for (const name of names) {
    const file = path.join(dirOf(keelHome), name);
    let entry: Entry;
    try {
      entry = JSON.parse(readFileSync(file, 'utf8')) as Entry;
    } catch {
      rmSync(file, { force: true });
      continue;
    }
    if (startTime(entry.pid) === entry.start) continue; // that Keel still runs and checks its own
    const others = heldByOthers(keelHome);
    for (const p of entry.placeholders ?? []) if (!others.has(p)) removePlaceholder(p);
    const before = new Map((entry.before ?? []).map(([p, kind, ino, size, mtime]) => [p, { kind, ino, size, mtime }]));
    const now = survey(surface, entry.root, entry.roots ?? [entry.root]).records;
    for (const [p, g] of now) {
      const was = before.get(p);
      if (!was) {
        rmSync(p, { recursive: true, force: true });
        lines.push(`${p}: created by a sandboxed command of a Keel that was killed before checking it; removed (${g.why})`);
      } else if (was.kind !== g.kind || (g.kind !== 'dir' && (was.ino !== g.ino || was.size !== g.size || was.mtime !== g.mtimeMs))) {
        lines.push(`${p}: changed by a sandboxed command of a Keel that was killed before checking it, or since; check it (${g.why})`);
      }
    }
    for (const p of before.keys()) if (!now.has(p)) lines.push(`${p}: removed by a sandboxed command of a Keel that was killed before checking it, or since`);
    rmSync(file, { force: true });
  }
  return lines;
}
