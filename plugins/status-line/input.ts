/** The JSON a status line command reads on stdin, in Claude Code's field names (plus Keel's `permission_mode`). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AppState, Session } from '../../kernel/index.js';

export interface Tally {
  linesAdded: number;
  linesRemoved: number;
  apiDurationMs: number;
}

export interface StatusInput {
  hook_event_name: 'Status';
  session_id: string;
  /** The session's file (plugin session-store), or null. */
  transcript_path: string | null;
  cwd: string;
  model: { id: string; display_name: string };
  workspace: { current_dir: string; project_dir: string };
  version: string;
  output_style: { name: string };
  permission_mode: string;
  cost: { total_cost_usd: number; total_duration_ms: number; total_api_duration_ms: number; total_lines_added: number; total_lines_removed: number };
  context_window: { context_window_size: number; used_tokens: number; used_percentage: number | null };
  exceeds_200k_tokens: boolean;
}

/** `claude-sonnet-4-5-20250929` → `Sonnet 4.5`; any other id is its own display name. */
export function displayName(model: string): string {
  const match = /^claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$/.exec(model);
  if (!match) return model;
  const family = match[1]![0]!.toUpperCase() + match[1]!.slice(1);
  return `${family} ${match[2]}${match[3] ? `.${match[3]}` : ''}`;
}

let version: string | undefined;
/** Keel's version: the package.json of the installed package the binary runs from. */
export function keelVersion(): string {
  if (version) return version;
  version = '0.0.0';
  let dir = process.argv[1] ? path.dirname(path.resolve(process.argv[1])) : process.cwd();
  for (let i = 0; i < 6; i++) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
        if (pkg.name === 'keel' && typeof pkg.version === 'string') return (version = pkg.version);
      } catch {
        // not a package file we can read: keep looking up
      }
    }
    dir = path.dirname(dir);
  }
  return version;
}

export function statusInput(session: Session, state: AppState, tally: Tally, style: string, now = Date.now(), transcript: string | null = null): StatusInput {
  const window = state.contextWindow;
  return {
    hook_event_name: 'Status',
    session_id: session.id,
    transcript_path: transcript,
    cwd: session.cwd,
    model: { id: session.model, display_name: displayName(session.model) },
    workspace: { current_dir: session.cwd, project_dir: session.projectRoot },
    version: keelVersion(),
    output_style: { name: style },
    permission_mode: session.permissionMode,
    cost: {
      total_cost_usd: state.cost,
      total_duration_ms: Math.max(0, now - session.startedAt),
      total_api_duration_ms: tally.apiDurationMs,
      total_lines_added: tally.linesAdded,
      total_lines_removed: tally.linesRemoved,
    },
    context_window: { context_window_size: window, used_tokens: state.contextTokens, used_percentage: window > 0 ? Math.round((1000 * state.contextTokens) / window) / 10 : null },
    exceeds_200k_tokens: state.contextTokens > 200_000,
  };
}
