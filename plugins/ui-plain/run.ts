/** The `interactive:plain` mode: a readline loop that prints everything as sequential lines. */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { runAgent, userMessage, type AgentEvent, type ModeContext, type PermissionMode, type Session, type ToolResult } from '../../kernel/index.js';
import type { PlainBridge } from './index.js';
import { PromptKeys } from './keys.js';
import { LineQueue } from './line-queue.js';
import { CallsNotRun, clean, collapse, eventLines, messageLines, resultLines, StreamCleaner, todoLines } from './lines.js';
import { pickSession, type SessionSummary } from './picker.js';
import { questionAsker } from './questions.js';
import { asciiStream, bracketedPaste, isUtf8Locale } from './terminal.js';
import { LineGuard } from './typeahead.js';

/**
 * Shift+Tab's cycle, Claude Code's: ask → edits → plan → ask. `auto` and `manual` come only from a flag, config or
 * /permissions; a session in one of them leaves it for `ask`, and that mode then joins the cycle after plan so
 * Shift+Tab can come back to it (as Claude Code's bypass mode does when started with it).
 */
const CYCLE: PermissionMode[] = ['ask', 'edits', 'plan'];

export function nextCycleMode(current: PermissionMode, outside: PermissionMode | undefined): PermissionMode {
  const cycle = outside ? [...CYCLE, outside] : CYCLE;
  const at = cycle.indexOf(current);
  return at === -1 ? 'ask' : cycle[(at + 1) % cycle.length];
}
const BUILTINS = [
  { name: 'help', description: 'show the keys and commands' },
  { name: 'clear', description: 'start a new session (the old one stays on disk)' },
  { name: 'resume', description: 'pick an earlier session of this project to continue; /resume <id> continues that one' },
  { name: 'exit', description: 'save the session and leave' },
];
const KEYS = [
  'Enter sends; end a line with \\ to go on to the next. A pasted block is kept whole as [pasted N lines] and sent with the line.',
  'Up/Down recall history. Ctrl+R searches it as you type: Ctrl+R again finds an older match, Enter sends the match, Right/Left/Ctrl+E take it to edit, Esc or Ctrl+G go back.',
  'Tab completes /commands and @paths. Shift+Tab cycles the permission mode. Esc or Ctrl+C interrupts a turn.',
  '!cmd runs a shell command, #note adds a line to the memory index. Ctrl+C twice or Ctrl+D exits.',
];

interface SessionStore {
  list(root: string): Promise<SessionSummary[]>;
  close(session: Session): void;
}

const NO_SHELL: ToolResult = { content: '!: this preset has no bash tool', isError: true };

export async function runPlain(ctx: ModeContext, bridge: PlainBridge): Promise<number> {
  const { kernel, io } = ctx;
  const output = isUtf8Locale(process.env) ? io.stdout : asciiStream(io.stdout);
  const out = (s: string) => void output.write(s);
  // Without session-store nothing is kept between runs.
  const history = kernel.services.get('promptHistory')?.open() ?? { entries: [], add() {}, search: () => null };
  // The session store's: how a resumed session's messages read, and how much of it is printed. Without it nothing is resumed.
  const transcript = kernel.services.get('transcript');
  const terminal = Boolean(io.stdin.isTTY && io.stdout.isTTY);
  const dumb = process.env.TERM === 'dumb';
  let session: Session;
  const commands = () => [...BUILTINS, ...kernel.commands.names().filter((n) => !BUILTINS.some((b) => b.name === n)).map((name) => ({ name, description: kernel.commands.get(name)?.description ?? '' }))].sort((a, b) => a.name.localeCompare(b.name));

  const keypressBefore = io.stdin.listeners('keypress');
  const rl = readline.createInterface({
    input: io.stdin,
    output,
    terminal,
    history: [...history.entries].reverse().filter((e) => !e.includes('\n')),
    historySize: 500,
    removeHistoryDuplicates: true,
    completer: (line: string) => complete(line, commands(), session?.cwd ?? kernel.config.cwd),
  });
  const lines = new LineQueue();
  let atLineStart = true;
  let promptShown = false;
  // Every line is cleaned where it is written: what the model, a tool, a file or a server sent cannot drive the terminal.
  const say = (text: string) => {
    out(`${atLineStart ? '' : '\n'}${clean(text)}\n`);
    atLineStart = true;
  };
  /** A line printed while the prompt waits: it goes below what is typed, and the prompt comes back under it. */
  const notice = (text: string) => {
    if (!promptShown) return say(text);
    out(`\n${clean(text)}\n`);
    rl.prompt(true);
  };
  // A secret answer (an API key for /login) is neither echoed nor kept in readline's history.
  let muted = false;
  const echo = rl as unknown as { _writeToOutput(s: string): void; history?: string[] };
  const writeToOutput = echo._writeToOutput.bind(rl);
  echo._writeToOutput = (s: string) => {
    // Keys typed while no prompt waits (a turn runs) are not echoed into the answer streaming there: the line
    // comes back at the next prompt, and one finished with Enter is shown there as it is sent.
    if (terminal && !promptShown) return;
    if (!muted) writeToOutput(s);
    else if (s.includes('\n')) writeToOutput('\n');
  };
  const ask = async (prompt: string, signal?: AbortSignal, fresh = false, secret = false): Promise<string | null> => {
    const typedAhead = terminal && !fresh ? lines.takeQueued() : undefined;
    if (typedAhead !== undefined) {
      out(`${atLineStart ? '' : '\n'}${clean(prompt)}${clean(typedAhead)}\n`);
      atLineStart = true;
      return typedAhead;
    }
    rl.setPrompt(prompt);
    promptShown = true;
    rl.prompt();
    atLineStart = false;
    muted = secret;
    try {
      const line = await lines.next(signal, fresh);
      if (secret && line !== null && echo.history?.[0] === line) echo.history.shift();
      return line;
    } finally {
      muted = false;
      promptShown = false;
    }
  };

  let turnController: AbortController | null = null;
  const interrupt = () => {
    if (!turnController) return false;
    turnController.abort(new Error('interrupted by the user'));
    return true;
  };
  let outsideMode: PermissionMode | undefined;
  const cycleMode = () => {
    if (!session) return;
    if (!CYCLE.includes(session.permissionMode)) outsideMode = session.permissionMode;
    session.permissionMode = nextCycleMode(session.permissionMode, outsideMode);
    notice(`[mode] Permission mode: ${session.permissionMode}`);
  };
  const columns = () => (io.stdout as NodeJS.WriteStream).columns || 80;
  /** A resumed conversation, printed once: its end only when it is long, below a line saying how much is left out. */
  const printHistory = (messages: Session['messages']) => {
    if (!transcript) return;
    const tail = transcript.tail(messages, (message) => messageLines(message, transcript.userItems), columns());
    const note = transcript.hiddenNote(tail);
    if (note) say(note);
    for (const group of tail.groups) for (const line of group) say(line);
  };
  // A search begun while a turn runs is drawn once the prompt is back (readline's echo is held the same way).
  const writeAtPrompt = (s: string) => {
    if (promptShown) out(s);
  };
  const keys = terminal ? new PromptKeys({ rl, input: io.stdin, before: keypressBefore, find: (q, before) => history.search(q, before), columns, dumb, write: writeAtPrompt, onEscape: interrupt, onCycleMode: cycleMode, onAnyKey: () => onAnyKey() }) : null;
  const pasteOff = terminal && !dumb ? bracketedPaste(io.stdout) : () => undefined;
  const readlineHistory = (rl as unknown as { history?: string[] }).history;
  rl.on('line', (line) => {
    atLineStart = true;
    const full = keys ? keys.take(line) : line;
    // A line sent with a placeholder is not recalled by Up as its placeholder (Ctrl+R finds it whole).
    if (full !== line && readlineHistory?.[0] === line) readlineHistory.shift();
    lines.push(full);
  });
  rl.on('close', () => lines.close());

  // Questions that ask for a decision take no line typed ahead for the prompt (typeahead.ts): the line being typed
  // when one appears is set aside for the prompt, and a line begun before the keyboard was quiet is not an answer.
  let guard: LineGuard | null = null;
  let lastKeyAt = -Infinity;
  const onAnyKey = () => {
    const at = performance.now();
    guard?.key({ at, previous: lastKeyAt });
    lastKeyAt = at;
  };
  const editable = rl as unknown as { line: string; cursor: number };
  const askDecision = async (prompt: string, signal?: AbortSignal): Promise<string | null> => {
    const draft = editable.line;
    editable.line = '';
    editable.cursor = 0;
    // Lines from a pipe are not typed: only a terminal's keys are timed.
    const lineGuard = keys ? new LineGuard(performance.now()) : null;
    guard = lineGuard;
    try {
      for (;;) {
        const line = await ask(prompt, signal, true);
        if (line === null || !lineGuard || lineGuard.line()) return line;
        say('(keys typed before this question appeared are ignored: read it, then answer)');
      }
    } finally {
      guard = null;
      // Back for the prompt, before anything typed since.
      editable.line = draft + editable.line;
      editable.cursor = editable.line.length;
    }
  };
  const answerQuestion = questionAsker({
    say,
    ask: (prompt, signal, secret, decision) => (decision ? askDecision(prompt, signal) : ask(prompt, signal, true, secret)),
    signal: () => turnController?.signal,
  });

  // Events become lines; the answer streams as it comes.
  const notRun = new CallsNotRun();
  const streamed = new Set<string>();
  const answer = new StreamCleaner();
  const writeAnswer = (text: string) => {
    if (!text) return;
    out(text);
    atLineStart = text.endsWith('\n');
  };
  const onEvent = (event: AgentEvent) => {
    if (event.type === 'text_delta') return writeAnswer(answer.push(event.text));
    writeAnswer(answer.flush());
    for (const line of notRun.lines(event)) say(line);
    if (event.type === 'assistant_message') {
      if (!atLineStart) say('');
      return;
    }
    // A call whose output was printed live gets its [done] line only: the output is not printed twice.
    if (event.type === 'tool_output') streamed.add(event.id);
    if (event.type === 'tool_end' && streamed.delete(event.call.id) && typeof event.result.display?.diff !== 'string') {
      say(resultLines(event.call, event.result)[0]!);
      return;
    }
    for (const line of eventLines(event)) say(line);
  };
  const stopObserving = kernel.observe(onEvent);
  let lastTodos = kernel.state.get().todos;
  const stopTodos = kernel.state.subscribe((state) => {
    if (state.todos === lastTodos) return;
    lastTodos = state.todos;
    for (const line of todoLines(state.todos)) say(line);
  });

  const status = () => {
    const s = kernel.state.get();
    const context = s.contextWindow ? `${Math.round((100 * s.contextTokens) / s.contextWindow)}% context` : `${s.contextTokens} tokens`;
    return `[${session.model} - ${session.permissionMode} mode - ${context} - $${s.cost.toFixed(4)}]`;
  };

  /** Runs work as the current turn: Esc aborts it. A turn says it started and ends with the status line; a command does not. */
  const runTurn = async (work: (signal: AbortSignal) => Promise<void>, quiet = false) => {
    turnController = new AbortController();
    const started = Date.now();
    if (!quiet) say('Working... (esc to interrupt)');
    try {
      await work(turnController.signal);
    } catch (err) {
      say(`[error] ${userMessage(err)}`);
    } finally {
      turnController = null;
      if (!quiet) say(`${status()} ${((Date.now() - started) / 1000).toFixed(1)}s`);
    }
  };

  let armed = false;
  rl.on('SIGINT', () => {
    if (interrupt()) return;
    if (rl.line) {
      rl.write(null, { ctrl: true, name: 'u' });
      return;
    }
    if (armed) return lines.close();
    armed = true;
    notice('(press Ctrl+C again to exit)');
  });
  // A signal (SIGTERM, SIGHUP, a SIGINT sent from outside) stops the turn and ends the UI.
  const onAbort = () => {
    interrupt();
    lines.close();
  };
  ctx.signal.addEventListener('abort', onAbort);

  const store = kernel.services.get('session-store') as SessionStore | undefined;
  const pick = async (): Promise<string | null> => pickSession(store ? await store.list(kernel.config.projectRoot) : [], say, (prompt) => ask(prompt));
  const start = async (overrides?: Parameters<ModeContext['startSession']>[0]) => {
    const next = await ctx.startSession(overrides);
    if (session) store?.close(session);
    session = next;
  };
  const cleanup = () => {
    interrupt();
    bridge.ask = null;
    ctx.signal.removeEventListener('abort', onAbort);
    keys?.dispose();
    pasteOff();
    stopObserving();
    stopTodos();
    rl.close();
  };

  try {
    if (ctx.options.resume === true) {
      const id = await pick();
      await start(id ? { resume: { id } } : { resume: undefined });
    } else await start();
  } catch (err) {
    cleanup();
    throw err;
  }
  bridge.ask = answerQuestion;
  // The user's statusLine command (plugin status-line): a new line is printed under the waiting prompt, or
  // before the next prompt when it came during a turn; uncoloured, as everything this UI writes.
  let statusLine = '';
  let statusShown = true;
  const stopStatus = kernel.state.subscribe((state) => {
    const line = clean(state.statusLine ?? '');
    if (line === statusLine) return;
    statusLine = line;
    if (line && promptShown) notice(line);
    else statusShown = false;
  });
  const unwatchStatus = (kernel.services.get('status-line') as { watch?(): () => void } | undefined)?.watch?.();
  const resumed = Boolean(session!.resumedFrom) || session!.messages.length > 0;
  if (resumed) printHistory(session!.messages);
  say(`keel - ${session!.cwd}`);
  say(resumed ? `Resumed session ${session!.id} (${session!.messages.length} messages). /help for keys and commands.` : '/help for keys and commands, Ctrl+D to exit.');
  // What `-p` refuses to start without, said at start.
  if ((kernel.config.provider ?? 'anthropic') === 'anthropic' && !kernel.config.apiKey) {
    say('[warn] No API key: set ANTHROPIC_API_KEY (or apiKey in agent.config.ts), or run keel login, then start keel again.');
  }

  // `keel --ui plain "fix the test"`: the prompt given on the command line is the first one sent.
  let initial = ctx.options.resume === true ? undefined : ctx.prompt?.trim() || undefined;
  try {
    for (;;) {
      if (!statusShown && statusLine) say(statusLine);
      statusShown = true;
      let text = initial ?? (await ask('> '));
      if (initial) say(`> ${initial}`);
      initial = undefined;
      if (text === null) break;
      armed = false;
      while (text.endsWith('\\')) {
        const more = await ask('. ');
        if (more === null) break;
        text = `${text.slice(0, -1)}\n${more}`;
      }
      const trimmed = text.trim();
      if (!trimmed) continue;
      history.add(text);
      if (trimmed.startsWith('/')) {
        const match = /^\/([\w-]+(?::[\w-]+)*)\s*([\s\S]*)$/.exec(trimmed);
        const name = match?.[1] ?? '';
        const args = (match?.[2] ?? '').trim();
        if (name === 'exit' || name === 'quit') break;
        if (name === 'help') {
          for (const line of KEYS) say(line);
          for (const c of commands()) say(`/${c.name} - ${c.description}`);
          continue;
        }
        if (name === 'clear') {
          await start({ resume: undefined });
          say(`New session ${session!.id}`);
          continue;
        }
        if (name === 'resume') {
          const id = args || (await pick());
          if (!id) continue;
          try {
            await start({ resume: { id } });
            printHistory(session!.messages);
            say(`Resumed session ${session!.id} (${session!.messages.length} messages)`);
          } catch (err) {
            say(`[error] ${userMessage(err)}`);
          }
          continue;
        }
        const command = kernel.commands.get(name);
        if (!command) {
          say(`Unknown command /${name}; /help lists them`);
          continue;
        }
        await runTurn(async (signal) => {
          try {
            const printed: string[] = [];
            // A command that runs a turn (a custom command, a skill, an MCP prompt) returns the answer the
            // transcript already streamed: it is not shown twice.
            let answered: string | undefined;
            const stop = kernel.observe((event) => {
              if (event.type === 'result') answered = event.result.result;
            });
            let output: void | string;
            try {
              output = await command.run(args, { kernel, session: session!, print: (t) => printed.push(t), signal });
            } finally {
              stop();
            }
            if (answered !== undefined && output === answered) output = undefined;
            const all = [...printed, ...(typeof output === 'string' && output ? [output] : [])].join('\n').replace(/\n+$/, '');
            if (all) say(clean(all));
          } catch (err) {
            say(`[error] /${name}: ${userMessage(err)}`);
          }
        }, true);
        continue;
      }
      if (trimmed.startsWith('!')) {
        await runTurn(async (signal) => {
          const shell = kernel.services.get('userShell');
          const result = shell ? await shell.run(session!, trimmed.slice(1).trim(), answerQuestion, signal) : NO_SHELL;
          if (result.isError && !result.display) for (const line of collapse(contentText(result.content), 20)) say(`[error] ${line}`);
        });
        continue;
      }
      if (trimmed.startsWith('#')) {
        const memory = kernel.services.get('memory-index') as { append(root: string, note: string): Promise<string> } | undefined;
        if (!memory) say('[error] #: this preset has no memory-index plugin to keep notes in');
        else {
          try {
            say(`Noted in ${await memory.append(session!.projectRoot, trimmed.slice(1))}`);
          } catch (err) {
            say(`[error] ${userMessage(err)}`);
          }
        }
        continue;
      }
      await runTurn(async (signal) => {
        await runAgent(kernel, session!, trimmed, { signal, maxTurns: ctx.options.maxTurns });
      });
    }
  } finally {
    unwatchStatus?.();
    stopStatus();
    cleanup();
    store?.close(session!);
  }
  say(`Session saved. Resume it with: keel --resume ${session!.id}`);
  return 0;
}

function contentText(content: string | Array<{ type: string; text?: string }>): string {
  return typeof content === 'string' ? content : content.map((b) => (b.type === 'text' ? (b.text ?? '') : '')).join('\n');
}

/** Tab completion for readline: `/name` at the start of the line, `@path` anywhere. */
function complete(line: string, commands: Array<{ name: string }>, cwd: string): [string[], string] {
  const word = /(\S*)$/.exec(line)?.[1] ?? '';
  if (word.startsWith('/') && word === line) return [commands.map((c) => `/${c.name}`).filter((c) => c.startsWith(word)), word];
  if (word.startsWith('@')) {
    const typed = word.slice(1);
    const slash = typed.lastIndexOf('/');
    const dir = slash === -1 ? '' : typed.slice(0, slash + 1);
    try {
      const entries = readdirSync(path.resolve(cwd, dir || '.'), { withFileTypes: true });
      return [entries.filter((e) => `${dir}${e.name}`.startsWith(typed) && e.name !== '.git' && e.name !== 'node_modules').map((e) => `@${dir}${e.name}${e.isDirectory() ? '/' : ''}`), word];
    } catch {
      return [[], word];
    }
  }
  return [[], word];
}
