/** Where an ACP session keeps its host (`session.data`): the warm taps and services find it there. */
import type { Answer, Question, Session, Turn } from '../../kernel/index.js';

/** What the bash tool hands a terminal (plugins/tool-bash/terminal.ts), as the `terminal` service receives it. */
export interface TerminalRun {
  session: Session;
  toolUseId: string;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  outputLimit: number;
}

export interface TerminalOutcome {
  output: string;
  truncated: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  fd3: string;
}

/** The editor behind one ACP session, as Keel's plugins reach it. */
export interface AcpHost {
  ask(question: Question, turn: Turn): Promise<Answer | undefined>;
  handlesFiles(what: 'read' | 'write'): boolean;
  readText(abs: string, signal: AbortSignal): Promise<string>;
  writeText(abs: string, text: string, signal: AbortSignal): Promise<void>;
  handlesTerminal(): boolean;
  runInTerminal(run: TerminalRun): Promise<TerminalOutcome>;
}

export const HOST_KEY = 'acp';

export function hostOf(session: Session): AcpHost | undefined {
  return session.data.get(HOST_KEY) as AcpHost | undefined;
}

/** The host of a session a service was told it handles; an editor that went away in between is an error, not a crash. */
export function requireHost(session: Session): AcpHost {
  const host = hostOf(session);
  if (!host) throw new Error(`session ${session.id} is no longer served by an editor`);
  return host;
}
