/** The `interactive:plain` mode: a readline loop that prints everything as sequential lines. */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import {
  auxiliaryTurn,
  errorMessage,
  runAgent,
  userMessage,
  type AgentEvent,
  type Answer,
  type Kernel,
  type ModeContext,
  type PermissionChoice,
  type PermissionMode,
  type Question,
  type Session,
  type ToolResult,
  type TrustQuestion,
} from '../../kernel/index.js';
import { History, historyFile } from './history.js';
import type { PlainBridge } from './index.js';
import { callLine, collapse, resultLines, retryLine } from './lines.js';

const MODES: PermissionMode[] = ['ask', 'edits', 'auto', 'manual'];
const LABELS: Record<PermissionChoice, string> = { allow_once: 'Allow once', allow_session: 'Allow this session', deny: 'Deny', deny_session: 'Deny this session' };
const BUILTINS = [
  { name: 'help', description: 'show the keys and commands' },
  { name: 'clear', description: 'start a new session (the old one stays on disk)' },
  { name: 'resume', description: 'pick an earlier session of this project to continue; /resume <id> continues that one' },
  { name: 'exit', description: 'save the session and leave' },
];
const KEYS = [
  'Enter sends; end a line with \\ to go on to the next. Up/Down recall history; Ctrl+R finds the newest entry containing what is typed.',
  'Tab completes /commands and @paths. Shift+Tab cycles the permission mode. Esc or Ctrl+C interrupts a turn.',
  '!cmd runs a shell command, #note adds a line to the memory index. Ctrl+C twice or Ctrl+D exits.',
];

interface SessionSummary {
  id: string;
  lastActivity: Date;
  firstPrompt?: string;
  turns: number;
  costUsd: number;
}

/** Lines typed by the user, in order, for whoever asks next (the prompt loop or a question). */
class LineQueue {
  private lines: string[] = [];
  private waiting: ((line: string | null) => void) | null = null;
  closed = false;

  push(line: string): void {
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w(line);
    } else this.lines.push(line);
  }

  close(): void {
    this.closed = true;
    this.waiting?.(null);
    this.waiting = null;
  }

  next(): Promise<string | null> {
    if (this.lines.length > 0) return Promise.resolve(this.lines.shift() as string);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => (this.waiting = resolve));
  }
}

export async function runPlain(ctx: ModeContext, bridge: PlainBridge): Promise<number> {
  const { kernel, io } = ctx;
  const out = (s: string) => io.stdout.write(s);
  const history = new History(historyFile(kernel.config.keelHome, kernel.config.projectRoot));
  const terminal = Boolean(io.stdin.isTTY && io.stdout.isTTY);
  let session: Session;
  const commands = () => [...BUILTINS, ...kernel.commands.names().filter((n) => !BUILTINS.some((b) => b.name === n)).map((name) => ({ name, description: kernel.commands.get(name)?.description ?? '' }))].sort((a, b) => a.name.localeCompare(b.name));

  const rl = readline.createInterface({
    input: io.stdin,
    output: io.stdout,
    terminal,
    history: [...history.entries].reverse().filter((e) => !e.includes('\n')),
    historySize: 500,
    removeHistoryDuplicates: true,
    completer: (line: string) => complete(line, commands(), session?.cwd ?? kernel.config.cwd),
  });
  const lines = new LineQueue();
  rl.on('line', (line) => lines.push(line));
  rl.on('close', () => lines.close());

  let atLineStart = true;
  const say = (text: string) => {
    out(`${atLineStart ? '' : '\n'}${text}\n`);
    atLineStart = true;
  };
  const ask = async (prompt: string): Promise<string | null> => {
    rl.setPrompt(prompt);
    rl.prompt();
    return lines.next();
  };

  // Questions queue: parallel calls are asked one after another.
  let questionChain: Promise<unknown> = Promise.resolve();
  const answerQuestion = (question: Question): Promise<Answer> => {
    const next = questionChain.then(() => askQuestion(question));
    questionChain = next.catch(() => undefined);
    return next;
  };
  const askQuestion = async (question: Question): Promise<Answer> => {
    if (question.kind === 'text') {
      const text = await ask(`${question.prompt} `);
      return { kind: 'text', text: text ?? '' };
    }
    if (question.kind === 'choice') {
      // One question after another: a number picks an option (several, comma-separated, when multiSelect), other words are the answer.
      const answers: string[][] = [];
      for (const q of question.questions) {
        say(`[question] ${q.header}: ${q.question}`);
        q.options.forEach((o, i) => say(`  ${i + 1}) ${o.label}${o.description ? ` - ${o.description}` : ''}`));
        const reply = (await ask(q.multiSelect ? 'Answer (numbers, comma-separated, or your own words): ' : 'Answer (a number or your own words): ')) ?? '';
        const picks = reply.split(',').map((w) => q.options[Number(w.trim()) - 1]?.label);
        answers.push(picks.length > 0 && picks.every((p) => p !== undefined) ? (picks as string[]) : [reply.trim()]);
      }
      return { kind: 'choice', answers };
    }
    const input = (question.call.input ?? {}) as Record<string, unknown>;
    say(`[permission] ${callLine(question.call)} needs your approval${question.reason ? ` (${question.reason})` : ''}`);
    const shown = question.preview ?? (question.call.name === 'bash' ? String(input.command ?? '') : typeof input.url === 'string' ? input.url : JSON.stringify(input, null, 2));
    for (const line of shown.split('\n')) say(`  | ${line}`);
    say(question.options.map((o, i) => `${i + 1}) ${LABELS[o]}`).join('  '));
    for (;;) {
      const reply = await ask('Answer [1-4, y = allow once, n = deny]: ');
      if (reply === null || turnController?.signal.aborted) return { kind: 'permission', choice: 'deny' };
      const word = reply.trim().toLowerCase();
      const choice = word === 'y' || word === 'yes' ? 'allow_once' : word === 'n' || word === 'no' || word === '' ? 'deny' : question.options[Number(word) - 1];
      if (choice) return { kind: 'permission', choice };
      say(`"${reply}" is not an answer: type 1-${question.options.length}, y or n`);
    }
  };

  // Events become lines; the answer streams as it comes.
  let turnController: AbortController | null = null;
  const onEvent = (event: AgentEvent) => {
    switch (event.type) {
      case 'text_delta':
        out(event.text);
        atLineStart = event.text.endsWith('\n');
        return;
      case 'assistant_message':
        if (!atLineStart) say('');
        return;
      case 'withdraw':
        say(`[retry] the answer above was cut off: ${event.reason}`);
        return;
      case 'tool_start':
        say(`[tool] ${callLine(event.call)}`);
        return;
      case 'tool_output':
        for (const line of event.chunk.replace(/\n$/, '').split('\n')) say(`  > ${line}`);
        return;
      case 'tool_end':
        for (const line of resultLines(event.call, event.result)) say(line);
        return;
      case 'permission':
        if (event.source === 'user') say(`[permission] ${callLine(event.call)}: ${event.choice ? LABELS[event.choice] : event.decision.behavior}`);
        else if (event.decision.behavior === 'deny') say(`[denied] ${callLine(event.call)}: ${event.decision.reason}`);
        return;
      case 'retry':
        say(retryLine(event));
        return;
      case 'compact':
        say(`[compact] Context compacted (${event.trigger}): ${event.preTokens} -> ${event.postTokens} tokens`);
        return;
      case 'refusal':
        say(`[error] The model refused: ${event.text}`);
        return;
      case 'log':
        if (event.level === 'error' || event.level === 'warn') say(`[${event.level}] ${event.message}`);
        return;
      case 'result':
        if (event.result.aborted) say('[interrupted]');
        else if (event.result.isError) say(`[error] ${event.result.error ?? event.result.subtype}`);
        return;
      default:
        return;
    }
  };
  const stopObserving = kernel.observe(onEvent);
  let lastTodos = kernel.state.get().todos;
  const stopTodos = kernel.state.subscribe((state) => {
    if (state.todos === lastTodos) return;
    lastTodos = state.todos;
    if (state.todos.length === 0) return;
    say('[todos]');
    for (const t of state.todos) say(`  [${t.status === 'completed' ? 'x' : t.status === 'in_progress' ? '>' : ' '}] ${t.content}`);
  });

  const status = () => {
    const s = kernel.state.get();
    const context = s.contextWindow ? `${Math.round((100 * s.contextTokens) / s.contextWindow)}% context` : `${s.contextTokens} tokens`;
    return `[${session.model} - ${session.permissionMode} mode - ${context} - $${s.cost.toFixed(4)}]`;
  };

  const runTurn = async (work: (signal: AbortSignal) => Promise<void>) => {
    turnController = new AbortController();
    const started = Date.now();
    say('Working... (esc to interrupt)');
    try {
      await work(turnController.signal);
    } catch (err) {
      say(`[error] ${userMessage(err)}`);
    } finally {
      turnController = null;
      say(`${status()} ${((Date.now() - started) / 1000).toFixed(1)}s`);
    }
  };
  const interrupt = () => {
    if (!turnController) return false;
    turnController.abort(new Error('interrupted by the user'));
    return true;
  };

  // Keys readline does not handle: Esc interrupts, Shift+Tab cycles the mode, Ctrl+R searches history.
  let searchFrom = Number.MAX_SAFE_INTEGER;
  const onKey = (_s: string | undefined, key: readline.Key | undefined) => {
    if (!key) return;
    if (key.name === 'escape') interrupt();
    else if (key.name === 'tab' && key.shift && session) {
      session.permissionMode = MODES[(MODES.indexOf(session.permissionMode) + 1) % MODES.length];
      say(`[mode] Permission mode: ${session.permissionMode}`);
      rl.prompt(true);
    } else if (key.ctrl && key.name === 'r') {
      const query = rl.line;
      const found = history.search(query, searchFrom);
      if (!found) return;
      searchFrom = found.index;
      rl.write(null, { ctrl: true, name: 'u' });
      rl.write(found.entry.split('\n')[0]);
    } else if (!(key.ctrl && key.name === 'r')) searchFrom = Number.MAX_SAFE_INTEGER;
  };
  if (terminal) io.stdin.on('keypress', onKey);
  let armed = false;
  rl.on('SIGINT', () => {
    if (interrupt()) return;
    if (rl.line) {
      rl.write(null, { ctrl: true, name: 'u' });
      return;
    }
    if (armed) return lines.close();
    armed = true;
    say('(press Ctrl+C again to exit)');
    rl.prompt();
  });
  const onAbort = () => interrupt();
  ctx.signal.addEventListener('abort', onAbort);

  const store = kernel.services.get('session-store') as { list(root: string): Promise<SessionSummary[]>; close(session: Session): void } | undefined;
  const pick = async (): Promise<string | null> => {
    const all = store ? await store.list(kernel.config.projectRoot) : [];
    let query = '';
    for (;;) {
      const shown = all.filter((s) => s.id.includes(query) || (s.firstPrompt ?? '').toLowerCase().includes(query.toLowerCase())).slice(0, 20);
      say(query ? `Sessions matching "${query}":` : 'Sessions of this project, newest first:');
      if (shown.length === 0) say('  (none)');
      shown.forEach((s, i) => say(`  ${i + 1}) ${s.lastActivity.toISOString().slice(0, 16).replace('T', ' ')} ${s.id.slice(0, 8)} ${s.turns} turns $${s.costUsd.toFixed(2)} ${(s.firstPrompt ?? '(no prompt)').replace(/\s+/g, ' ').slice(0, 60)}`));
      const reply = await ask('Number to resume, text to search, Enter for a new session: ');
      if (reply === null || reply.trim() === '') return null;
      const n = Number(reply.trim());
      if (Number.isInteger(n) && n >= 1 && n <= shown.length) return shown[n - 1].id;
      query = reply.trim();
    }
  };

  const start = async (overrides?: Parameters<ModeContext['startSession']>[0]) => {
    const next = await ctx.startSession(overrides);
    if (session) store?.close(session);
    session = next;
  };

  try {
    if (ctx.options.resume === true) {
      const id = await pick();
      await start(id ? { resume: { id } } : { resume: undefined });
    } else await start();
  } catch (err) {
    stopObserving();
    stopTodos();
    rl.close();
    throw err;
  }
  bridge.ask = answerQuestion;
  say(`keel - ${session!.cwd}`);
  say(session!.messages.length > 0 ? `Resumed session ${session!.id} (${session!.messages.length} messages). /help for keys and commands.` : '/help for keys and commands, Ctrl+D to exit.');

  // `keel --ui plain "fix the test"`: the prompt given on the command line is the first one sent.
  let initial = ctx.options.resume === true ? undefined : ctx.prompt?.trim() || undefined;
  try {
    for (;;) {
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
        const match = /^\/([\w-]+)\s*([\s\S]*)$/.exec(trimmed);
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
        try {
          const printed: string[] = [];
          const output = await command.run(args, { kernel, session: session!, print: (t) => printed.push(t), signal: ctx.signal });
          const all = [...printed, ...(typeof output === 'string' && output ? [output] : [])].join('\n').replace(/\n+$/, '');
          if (all) say(all);
        } catch (err) {
          say(`[error] /${name}: ${userMessage(err)}`);
        }
        continue;
      }
      if (trimmed.startsWith('!')) {
        await runTurn(async (signal) => {
          const result = await runShell(kernel, session!, trimmed.slice(1).trim(), answerQuestion, signal);
          if (result.isError && !result.display) for (const line of collapse(contentText(result), 20)) say(`[error] ${line}`);
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
    interrupt();
    bridge.ask = null;
    ctx.signal.removeEventListener('abort', onAbort);
    if (terminal) io.stdin.off('keypress', onKey);
    stopObserving();
    stopTodos();
    store?.close(session!);
    rl.close();
  }
  say(`Session saved. Resume it with: keel --resume ${session!.id}`);
  return 0;
}

function contentText(result: ToolResult): string {
  return typeof result.content === 'string' ? result.content : result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
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

let shellCounter = 0;

/** `!cmd`: the bash tool under the permission policy, as the Ink UI does it. */
async function runShell(kernel: Kernel, session: Session, command: string, ask: (q: Question) => Promise<Answer>, signal: AbortSignal): Promise<ToolResult> {
  const tool = kernel.tools.get('bash');
  if (!tool) return { content: '!: this preset has no bash tool', isError: true };
  const call = { id: `toolu_shell_${process.pid}_${++shellCounter}`, name: 'bash', input: { command } };
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) return { content: `!: ${errorMessage(parsed.error)}`, isError: true };
  const turn = auxiliaryTurn(kernel, session, signal);
  let decision = await kernel.hooks.prePermission.promise(call, turn).catch((err: unknown) => ({ behavior: 'deny' as const, reason: `permission check failed: ${errorMessage(err)}` }));
  decision ??= { behavior: 'deny', reason: 'no permission policy allowed bash' };
  if (decision.behavior === 'ask') {
    const answer = await ask({ kind: 'permission', call, tool, reason: decision.reason, preview: decision.preview, options: ['allow_once', 'allow_session', 'deny', 'deny_session'] });
    const choice = answer.kind === 'permission' ? answer.choice : 'deny';
    decision = choice === 'allow_once' || choice === 'allow_session' ? { behavior: 'allow' } : { behavior: 'deny', reason: 'Permission denied by the user' };
    kernel.emit({ type: 'permission', call, decision, source: 'user', choice });
  } else if (decision.behavior === 'deny') kernel.emit({ type: 'permission', call, decision, source: 'policy' });
  if (decision.behavior !== 'allow') return { content: decision.reason, isError: true, display: { denied: true } };
  const started = Date.now();
  kernel.emit({ type: 'tool_start', call, tool });
  let result: ToolResult;
  try {
    result =
      (await kernel.hooks.toolExecute.promise(call, turn)) ??
      (await tool.execute(parsed.data, { signal, session, turn, call, kernel, cwd: session.cwd, emit: (event) => kernel.emit(event) }));
  } catch (err) {
    result = { content: `Error: ${errorMessage(err)}`, isError: true };
  }
  kernel.emit({ type: 'tool_end', call, result, durationMs: Date.now() - started });
  return { ...result, display: { ...result.display, shown: true } };
}

/** The trust question as a y/n line. */
export async function askTrustPlain(question: TrustQuestion): Promise<boolean> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: Boolean(process.stdin.isTTY) });
  try {
    process.stdout.write(`Do you trust the files in ${question.folder}?\nTrusting it lets these run or load as settings:\n${question.files.map((f) => `  ${f}\n`).join('')}`);
    for (;;) {
      const reply = await new Promise<string | null>((resolve) => {
        rl.question('Trust this folder (remembered)? [y/n]: ', resolve);
        rl.once('close', () => resolve(null));
      });
      if (reply === null) return false;
      const word = reply.trim().toLowerCase();
      if (word === 'y' || word === 'yes') return true;
      if (word === 'n' || word === 'no' || word === '') return false;
    }
  } finally {
    rl.close();
  }
}
