/**
 * What the prompt's Enter does, and the session it does it in: a prompt runs a turn, `/name` a command
 * (UI built-ins first, then the registry), `!cmd` the shell, `#note` the memory index. No React here.
 */
import { runAgent, userMessage, type Kernel, type ModeContext, type Session, type ToolResult } from '../../kernel/index.js';
import { transcriptOf, type PromptHistory as History } from './services.js';
import { resultText, collapse, hangingWrap } from './format.js';
import type { QuestionQueue } from './questions.js';
import type { Paint } from './style.js';
import type { Transcript } from './transcript.js';
import { visibleControlsKeepingColours } from './safe-text.js';

interface SessionStore {
  close(session: Session): void;
}

export interface Builtin {
  name: string;
  description: string;
}

/** Commands the UI answers itself; every other `/name` comes from the registry. */
export const BUILTINS: Builtin[] = [
  { name: 'help', description: 'show the keys and commands' },
  { name: 'clear', description: 'start a new session (the old one stays on disk)' },
  { name: 'resume', description: 'pick an earlier session of this project to continue; /resume <id> continues that one' },
  { name: 'exit', description: 'save the session and leave' },
];

export const KEYS_HELP = [
  'Enter send · \\ + Enter or Alt+Enter new line · Up/Down history · Ctrl+R search history',
  'Tab complete /commands and @paths · Shift+Tab cycle permission mode · Esc interrupt',
  'Ctrl+O show the full output of collapsed tool results (… +N lines); Esc or Ctrl+O again to go back',
  'Ctrl+A/E start/end · Ctrl+B/F move · Alt+B/F word · Ctrl+K/U/W delete · Ctrl+J new line',
  '!cmd run a shell command · #note add a line to the memory index · Ctrl+C twice or Ctrl+D exit',
];

export type Outcome = 'continue' | 'exit' | 'pick-session';

export class Controller {
  session!: Session;
  private turn: AbortController | null = null;
  running = false;
  /** Set when the UI must leave (a signal ended the run). */
  exitRequested = false;
  private listeners = new Set<() => void>();

  constructor(
    readonly kernel: Kernel,
    readonly ctx: ModeContext,
    readonly transcript: Transcript,
    readonly questions: QuestionQueue,
    readonly history: History,
    private readonly paint: Paint,
  ) {
    // The spinner's clock stands still while a dialog waits for the user.
    questions.subscribe(() => transcript.setWaiting(questions.current !== null));
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Registry and built-in command names, for completion. */
  commandNames(): Array<{ name: string; description: string }> {
    const registry = this.kernel.commands.names().map((name) => ({ name, description: this.kernel.commands.get(name)?.description ?? '' }));
    return [...BUILTINS, ...registry.filter((c) => !BUILTINS.some((b) => b.name === c.name))].sort((a, b) => a.name.localeCompare(b.name));
  }

  requestExit(): void {
    this.exitRequested = true;
    this.notify();
  }

  /** Esc: stops the running turn (its pending questions are denied). */
  interrupt(): boolean {
    if (!this.turn) return false;
    this.turn.abort(new Error('interrupted by the user'));
    this.questions.denyAll();
    return true;
  }

  private queue: Promise<unknown> = Promise.resolve();

  /**
   * Prompts sent while a turn runs wait for it, in order. `shown` is the prompt as the input showed it (a large
   * paste as its placeholder): the transcript prints that, so sending a 1 MB paste never waits on laying it out.
   */
  submit(raw: string, shown = raw): Promise<Outcome> {
    const next = this.queue.then(() => this.submitNow(raw, shown));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async submitNow(raw: string, shown: string): Promise<Outcome> {
    const text = raw.trim();
    if (!text) return 'continue';
    this.history.add(raw);
    const p = this.paint;
    if (text.startsWith('/')) return this.command(text);
    if (text.startsWith('!')) {
      this.transcript.print(p.bold(`! ${text.slice(1).trim()}`));
      await this.guarded(async (signal) => {
        const shell = this.kernel.services.get('userShell');
        const result: ToolResult = shell ? await shell.run(this.session, text.slice(1).trim(), (q) => this.questions.ask(q), signal) : { content: '!: this preset has no bash tool', isError: true };
        // Denials and results were printed from their events; only failures before those are left.
        if (result.isError && !result.display) this.transcript.print(...collapse(resultText(result), 20).map((l) => p.red(l)));
      });
      return 'continue';
    }
    if (text.startsWith('#')) {
      const memory = this.kernel.services.get('memory-index') as { append(root: string, note: string): Promise<string> } | undefined;
      if (!memory) this.transcript.print(p.red('#: this preset has no memory-index plugin to keep notes in'));
      else {
        try {
          const file = await memory.append(this.session.projectRoot, text.slice(1));
          this.transcript.print(p.dim(`Noted in ${file}`));
        } catch (err) {
          this.transcript.print(p.red(userMessage(err)));
        }
      }
      return 'continue';
    }
    this.transcript.print(`${p.bold.cyan('>')} ${shown.trim().split('\n').join('\n  ')}`);
    await this.guarded(async (signal) => {
      await runAgent(this.kernel, this.session, text, { signal, maxTurns: this.ctx.options.maxTurns });
    });
    return 'continue';
  }

  /** Runs work as the current turn: spinner on, Esc aborts it. */
  private async guarded(work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const controller = new AbortController();
    this.turn = controller;
    this.running = true;
    this.transcript.startTurn();
    this.notify();
    try {
      await work(controller.signal);
    } catch (err) {
      this.transcript.print(this.paint.red(`Error: ${userMessage(err)}`));
    } finally {
      this.turn = null;
      this.running = false;
      this.transcript.endTurn();
      this.notify();
    }
  }

  private async command(text: string): Promise<Outcome> {
    const p = this.paint;
    const match = /^\/([\w-]+(?::[\w-]+)*)\s*([\s\S]*)$/.exec(text);
    const name = match?.[1] ?? '';
    const args = (match?.[2] ?? '').trim();
    this.transcript.print(p.bold(text));
    if (name === 'exit' || name === 'quit') return 'exit';
    if (name === 'help') {
      const width = Math.max(...this.commandNames().map((c) => c.name.length)) + 2;
      // A description longer than the line continues under itself, not at column 0.
      const columns = Math.max(40, (process.stdout.columns || 80) - 1);
      const rows = this.commandNames().flatMap((c) => hangingWrap(c.description, 0, columns - width - 1).map((l, i) => (i === 0 ? `/${c.name.padEnd(width)}${p.dim(l)}` : p.dim(`${' '.repeat(width + 1)}${l}`))));
      this.transcript.print(...KEYS_HELP.map((l) => p.dim(l)), '', ...rows);
      return 'continue';
    }
    if (name === 'clear') {
      await this.replaceSession({ resume: undefined });
      this.transcript.print(p.dim(`New session ${this.session.id}`));
      return 'continue';
    }
    if (name === 'resume') {
      if (!args) return 'pick-session';
      await this.resume(args);
      return 'continue';
    }
    const command = this.kernel.commands.get(name);
    if (!command) {
      this.transcript.print(p.red(`Unknown command /${name}; /help lists them`));
      return 'continue';
    }
    await this.guarded(async (signal) => {
      const printed: string[] = [];
      // A command that runs a turn (a custom command, a skill, an MCP prompt) returns the answer the transcript
      // already streamed: it is not shown twice.
      let answered: string | undefined;
      const stop = this.kernel.observe((event) => {
        if (event.type === 'result') answered = event.result.result;
      });
      try {
        let output = await command.run(args, { kernel: this.kernel, session: this.session, print: (t) => printed.push(t), signal }).finally(stop);
        if (answered !== undefined && output === answered) output = undefined;
        const all = [...printed, ...(typeof output === 'string' && output ? [output] : [])].join('\n').replace(/\n+$/, '');
        if (all) this.transcript.print(visibleControlsKeepingColours(all));
      } catch (err) {
        this.transcript.print(p.red(`/${name}: ${userMessage(err)}`));
      }
    });
    return 'continue';
  }

  async resume(id: string): Promise<void> {
    try {
      await this.replaceSession({ resume: { id } });
      this.transcript.printHistory(this.session.messages, transcriptOf(this.kernel));
      this.transcript.print(this.paint.dim(`Resumed session ${this.session.id} (${this.session.messages.length} messages)`));
    } catch (err) {
      this.transcript.print(this.paint.red(userMessage(err)));
    }
  }

  private async replaceSession(overrides: Parameters<ModeContext['startSession']>[0]): Promise<void> {
    const next = await this.ctx.startSession(overrides);
    this.closeSession();
    this.session = next;
    this.notify();
  }

  closeSession(): void {
    if (!this.session) return;
    const store = this.kernel.services.get('session-store') as SessionStore | undefined;
    store?.close(this.session);
  }
}
