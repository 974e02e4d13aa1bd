/** Where an ACP session keeps its host (`session.data`): the warm taps and services find it there. */
import type { Answer, Question, Services, Session, Turn } from '../../kernel/index.js';

/** What the bash tool hands a terminal, as the `terminal` service (typed by tool-bash) receives it, and the outcome. */
export type TerminalRun = Parameters<Services['terminal']['run']>[0];
export type TerminalOutcome = Awaited<ReturnType<Services['terminal']['run']>>;

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
