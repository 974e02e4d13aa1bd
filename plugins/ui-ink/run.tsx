/** The `interactive:ink` mode: loaded (with Ink and React) only when Keel starts on a terminal with this UI. */
import React from 'react';
import chalk from 'chalk';
import { render } from 'ink';
import type { ModeContext, Session } from '../../kernel/index.js';
import { transcriptOf, type PromptHistory, type TranscriptService } from './services.js';
import { App } from './app/App.js';
import type { SessionChoice } from './app/ResumePicker.js';
import { TrustQuestionScreen } from './app/TrustDialog.js';
import { Controller } from './controller.js';
import { toAscii } from './ascii.js';
import { bracketedPaste } from './bracketed.js';
import { loggedStream, OutputLog, reprintOnNarrowing } from './resize.js';
import { colorsWanted, glyphsFor, isUtf8Locale } from './glyphs.js';
import { QuestionQueue } from './questions.js';
import { stripColours } from './nocolor.js';
import { mappedStream } from './stream.js';
import { makePaint } from './style.js';
import { Transcript } from './transcript.js';
import type { TrustQuestion } from '../../kernel/index.js';

export interface Bridge {
  questions: QuestionQueue | null;
}

/** 30 frames a second at most: streamed tokens are batched into frames. */
const FRAME_MS = 33;
/**
 * Ink's own throttle, well above FRAME_MS's rate: the transcript batches the stream into frames itself, and a key
 * typed within 33 ms of the last frame would otherwise wait for the rest of Ink's window before its echo
 * (bench/RESULTS.md, "Interactive UI": every other key of fast typing waited ~35 ms).
 */
const INK_MAX_FPS = 125;

function setup(env: NodeJS.ProcessEnv) {
  const colors = colorsWanted(env);
  // Pre-rendered lines get no styles under NO_COLOR; Ink's own (chalk's shared instance) keep their emphasis, and
  // the stream drops their colours (terminalStream).
  return { glyphs: glyphsFor(env), paint: makePaint(colors && chalk.level > 0) };
}

interface SessionLister {
  list(projectRoot: string): Promise<SessionChoice[]>;
}

export async function runInk(ctx: ModeContext, bridge: Bridge): Promise<number> {
  const { kernel, io } = ctx;
  const { glyphs, paint } = setup(process.env);
  const output = new OutputLog();
  const terminal = terminalStream(io.stdout as NodeJS.WriteStream);
  const stdout = loggedStream(terminal, output);
  const transcript = new Transcript({ paint, glyphs, width: () => stdout.columns || 80, frameMs: FRAME_MS });
  const questions = new QuestionQueue();
  // Without session-store nothing is kept between runs.
  const history: PromptHistory = kernel.services.get('promptHistory')?.open() ?? { entries: [], add() {}, search: () => null };
  const controller = new Controller(kernel, ctx, transcript, questions, history, paint);
  const stopObserving = kernel.observe((event) => transcript.onEvent(event));
  let lastTodos = kernel.state.get().todos;
  const stopTodos = kernel.state.subscribe((state) => {
    if (state.todos === lastTodos) return;
    lastTodos = state.todos;
    transcript.printTodos(state.todos);
  });
  const store = kernel.services.get('session-store') as SessionLister | undefined;
  const listSessions = async () => (store ? store.list(kernel.config.projectRoot) : []);
  let picker: SessionChoice[] | null = null;
  try {
    if (ctx.options.resume === true) {
      picker = await listSessions();
      controller.session = await ctx.startSession({ resume: undefined });
    } else controller.session = await ctx.startSession();
  } catch (err) {
    stopObserving();
    stopTodos();
    throw err;
  }
  bridge.questions = questions;
  // The user's statusLine command (plugin status-line) runs while this UI is up; App shows its line.
  const unwatchStatus = (kernel.services.get('status-line') as { watch?(): () => void } | undefined)?.watch?.();
  greet(controller.session, transcriptOf(kernel), transcript, paint, glyphs.dot, missingKey(kernel));
  // SIGINT, SIGTERM or SIGHUP abort the whole run (the CLI's handler): the turn stops and the UI leaves. In raw
  // mode Ctrl+C arrives as a key instead.
  const onAbort = () => {
    controller.interrupt();
    controller.requestExit();
  };
  ctx.signal.addEventListener('abort', onAbort);
  // A paste arrives as one unit (bracketed.ts). Turned off again however the process ends: the finally below,
  // or the exit event after a crash or a second signal (process.exit).
  const endPaste = bracketedPaste(stdout);
  process.once('exit', endPaste);
  const stopResize = reprintOnNarrowing(terminal, output);
  const instance = render(
    <App controller={controller} glyphs={glyphs} paint={paint} initialPicker={picker} listSessions={listSessions} onExit={() => undefined} />,
    { stdout, stdin: io.stdin as NodeJS.ReadStream, exitOnCtrlC: false, patchConsole: true, maxFps: INK_MAX_FPS },
  );
  // `keel "fix the test"` on a terminal: the prompt given on the command line is the first one sent.
  if (ctx.prompt?.trim() && !picker) void controller.submit(ctx.prompt);
  try {
    await instance.waitUntilExit();
  } finally {
    unwatchStatus?.();
    stopResize();
    endPaste();
    process.off('exit', endPaste);
    controller.interrupt();
    bridge.questions = null;
    ctx.signal.removeEventListener('abort', onAbort);
    stopObserving();
    stopTodos();
    transcript.dispose();
    controller.closeSession();
  }
  io.stdout.write(`${paint.dim(`Session saved. Resume it with: keel --resume ${controller.session.id}`)}\n`);
  return 0;
}

/** The terminal as Ink may write to it: ASCII only under a non-UTF-8 locale, no colours under NO_COLOR. */
function terminalStream(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  const ascii = !isUtf8Locale(process.env);
  const plain = !colorsWanted(process.env);
  if (!ascii && !plain) return stream;
  return mappedStream(stream, (text) => {
    const out = ascii ? toAscii(text) : text;
    return plain ? stripColours(out) : out;
  });
}

function greet(session: Session, history: TranscriptService, transcript: Transcript, paint: ReturnType<typeof makePaint>, dot: string, keyProblem: string | null): void {
  const resumed = session.resumedFrom || session.messages.length > 0;
  transcript.printHistory(session.messages, history);
  transcript.print(
    `${paint.bold('keel')} ${paint.dim(`${dot} ${session.cwd}`)}`,
    paint.dim(resumed ? `Resumed session ${session.id} (${session.messages.length} messages). /help for keys and commands.` : '/help for keys and commands, Esc to interrupt, Ctrl+D to exit.'),
    ...(keyProblem ? [paint.yellow(keyProblem)] : []),
  );
}

/** What `-p` refuses to start without, said at start: no key for the Anthropic provider. */
export function missingKey(kernel: ModeContext['kernel']): string | null {
  if ((kernel.config.provider ?? 'anthropic') !== 'anthropic' || kernel.config.apiKey) return null;
  return 'No API key: set ANTHROPIC_API_KEY (or apiKey in agent.config.ts), or run keel login, then start keel again.';
}

/**
 * The trust question, asked before the rest of the UI exists (the kernel is rebuilt after a yes). Drawn in Ink's live
 * region and replaced by a one-line trace once answered, so the dialog does not stay in the scrollback.
 */
export async function askTrustInk(question: TrustQuestion, io: ModeContext['io']): Promise<boolean> {
  const { glyphs } = setup(process.env);
  const stdout = terminalStream(io.stdout as NodeJS.WriteStream);
  return new Promise((resolve) => {
    let answer = false;
    const instance = render(
      <TrustQuestionScreen
        question={question}
        glyphs={glyphs}
        rows={stdout.rows || 24}
        onDone={(yes) => {
          answer = yes;
          instance.unmount();
        }}
      />,
      { stdout, stdin: io.stdin as NodeJS.ReadStream, exitOnCtrlC: false, patchConsole: false },
    );
    void instance.waitUntilExit().then(() => resolve(answer));
  });
}
