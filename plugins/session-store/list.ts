/** The project's sessions, newest first, as `keel sessions` and `--resume` (no id) print them. */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { errorMessage, KeelError, visibleControls } from '../../kernel/index.js';
import { SESSION_ID } from './paths.js';
import { summarize, type SessionSummary } from './reader.js';

interface Entry {
  id: string;
  file: string;
  mtime: Date;
  bytes: number;
}

/** Session files of a project folder, newest activity first. A missing folder means no sessions. */
export function sessionFiles(dir: string): Entry[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    // Its own one line (a KeelError is not wrapped with the plugin and hook names), naming the folder.
    throw new KeelError(`cannot read this project's sessions in ${dir}: ${code === 'ENOTDIR' ? 'it is not a folder (ENOTDIR)' : errorMessage(err)}`, { code: 'sessions_folder' });
  }
  const entries: Entry[] = [];
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const id = name.slice(0, -'.jsonl'.length);
    if (!SESSION_ID.test(id)) continue;
    const file = path.join(dir, name);
    const stat = statSync(file, { throwIfNoEntry: false });
    if (stat?.isFile() && stat.size > 0) entries.push({ id, file, mtime: stat.mtime, bytes: stat.size });
  }
  return entries.sort((a, b) => b.mtime.getTime() - a.mtime.getTime() || a.id.localeCompare(b.id));
}

/**
 * Whether a session is one a person would pick: not a sub-agent's (its parent's session holds the conversation)
 * and not one without a single model turn (a run that failed before any answer). Hidden ones still resume by id.
 */
export function pickable(summary: SessionSummary): boolean {
  return !summary.subagent && summary.turns > 0;
}

/** The project's sessions, newest first; without `all`, only the pickable ones. */
export async function listSessions(dir: string, opts: { all?: boolean } = {}): Promise<SessionSummary[]> {
  const summaries: SessionSummary[] = [];
  for (const entry of sessionFiles(dir)) summaries.push(await summarize(entry.file, entry.id, entry.mtime, entry.bytes));
  return opts.all ? summaries : summaries.filter(pickable);
}

/**
 * How to resume, for the build that runs: `keel --resume <id>` opens the interactive UI, which only a build
 * with an interactive frontend has; otherwise a headless run continues the session.
 */
export function resumeHint(interactive: boolean): string {
  return interactive ? 'Resume one with: keel --resume <id>' : 'Resume one with: keel -p "<your next request>" --resume <id>';
}

export function formatList(summaries: SessionSummary[], projectRoot: string, interactive = false, hidden = 0): string {
  const note = hidden > 0 ? `${hidden} sub-agent or empty session${hidden > 1 ? 's' : ''} not shown (keel sessions --all lists them).` : undefined;
  if (summaries.length === 0) return [`No sessions for ${projectRoot} yet.`, ...(note ? [note] : [])].join('\n');
  const rows = summaries.map((s) => [s.id, formatTime(s.lastActivity), String(s.turns), `$${s.costUsd.toFixed(4)}`, `${s.subagent ? '(sub-agent) ' : ''}${oneLine(s.firstPrompt ?? '(no prompt)', 60)}`]);
  const head = ['ID', 'LAST ACTIVITY', 'TURNS', 'COST', 'FIRST PROMPT'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : i === 2 || i === 3 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ');
  return [line(head), ...rows.map(line), '', ...(note ? [note] : []), resumeHint(interactive)].join('\n');
}

export function listJson(summaries: SessionSummary[]): string {
  return JSON.stringify(
    summaries.map((s) => ({
      id: s.id,
      last_activity: s.lastActivity.toISOString(),
      first_prompt: s.firstPrompt ?? null,
      turns: s.turns,
      cost_usd: s.costUsd,
      parent_session_id: s.parent ?? null,
      subagent: s.subagent,
      bytes: s.bytes,
    })),
  );
}

function formatTime(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** One row of the list: whitespace flattened, and control characters (escape sequences in a prompt) shown, never sent. */
function oneLine(text: string, max: number): string {
  const flat = visibleControls(text.replace(/\s+/g, ' ').trim());
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
