/**
 * The interactive screen. Finished lines go through <Static> (printed once into the terminal's scrollback,
 * never redrawn); below them a live region, kept shorter than the screen, shows the answer's unfinished
 * line, running tools, a question or the prompt, the spinner and the footer.
 */
import React, { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { Box, Static, Text, useApp, useStdout } from 'ink';
import type { AppState, PermissionMode } from '../../../kernel/index.js';
import type { Controller } from '../controller.js';
import { toolTitle } from '../format.js';
import type { Glyphs } from '../glyphs.js';
import type { Paint } from '../style.js';
import { ChoiceDialog } from './ChoiceDialog.js';
import { PermissionDialog } from './PermissionDialog.js';
import { isPlanApproval, PlanDialog } from './PlanDialog.js';
import { OutputViewer } from './OutputViewer.js';
import { Prompt } from './Prompt.js';
import { ResumePicker, type SessionChoice } from './ResumePicker.js';
import { Footer, Spinner } from './Status.js';
import { TextQuestion } from './TextQuestion.js';
import { KeyRouterContext, useKeyRouter } from './keyRouter.js';
import { useKeys } from './useKeys.js';
import { useStaticBatches } from './useStaticBatches.js';

export interface AppProps {
  controller: Controller;
  glyphs: Glyphs;
  paint: Paint;
  /** Sessions to pick from at start (`--resume` without an id); null: no picker. */
  initialPicker: SessionChoice[] | null;
  listSessions(): Promise<SessionChoice[]>;
  onExit(): void;
  /** The clock keys are timed by, in ms (typeahead.ts); tests pass their own. */
  now?: () => number;
}

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

/** A new dialog (fresh state) for each question, even when two in a row look alike. */
const questionKeys = new WeakMap<object, number>();
let nextQuestionKey = 0;
function questionKey(question: object): number {
  let key = questionKeys.get(question);
  if (key === undefined) questionKeys.set(question, (key = nextQuestionKey++));
  return key;
}

function useSize(): { rows: number; columns: number } {
  const { stdout } = useStdout();
  const read = () => ({ rows: stdout.rows || 24, columns: stdout.columns || 80 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}

function useKernelState(controller: Controller): AppState {
  return useSyncExternalStore(
    (listener) => controller.kernel.state.subscribe(listener),
    () => controller.kernel.state.get(),
  );
}

export function App(props: AppProps): React.ReactElement {
  const { controller, glyphs, paint } = props;
  const { transcript, questions } = controller;
  const app = useApp();
  const finished = useStaticBatches(transcript);
  const question = useSyncExternalStore(
    (l) => questions.subscribe(l),
    () => questions.current,
  );
  const running = useSyncExternalStore(
    (l) => controller.subscribe(l),
    () => controller.running,
  );
  const state = useKernelState(controller);
  const { rows, columns } = useSize();
  const [picker, setPicker] = useState<SessionChoice[] | null>(props.initialPicker);
  const [hint, setHint] = useState<string | null>(null);
  const [armedExit, setArmedExit] = useState(false);
  // Ctrl+O's view of collapsed tool output, open above the prompt (which keeps its draft meanwhile).
  const [viewing, setViewing] = useState(false);
  const [, setModeTick] = useState(0);
  // A mode outside Shift+Tab's cycle (auto, manual) the session was in: the cycle comes back to it.
  const outsideMode = useRef<PermissionMode | undefined>(undefined);

  useEffect(() => {
    if (!hint) return;
    const timer = setTimeout(() => {
      setHint(null);
      setArmedExit(false);
    }, 2000);
    return () => clearTimeout(timer);
  }, [hint]);

  // Leaving: the live region is drawn empty first, so the prompt and footer do not stay on the screen.
  const [exiting, setExiting] = useState(false);
  useEffect(() => {
    if (!exiting) return;
    props.onExit();
    app.exit();
  }, [exiting]);
  const exit = () => setExiting(true);
  const exitRequested = useSyncExternalStore(
    (l) => controller.subscribe(l),
    () => controller.exitRequested,
  );
  useEffect(() => {
    if (exitRequested) exit();
  }, [exitRequested]);

  const submit = (text: string, shown: string) => {
    void controller.submit(text, shown).then(async (outcome) => {
      if (outcome === 'exit') exit();
      else if (outcome === 'pick-session') setPicker(await props.listSessions());
    });
  };

  const keys = useKeyRouter(props.now);
  // Ctrl+C in a dialog interrupts the turn as it does at the prompt; its pending questions are denied.
  useKeys(
    (input, key) => {
      if (key.ctrl && input === 'c') controller.interrupt();
    },
    { isActive: Boolean(question), router: keys },
  );

  const session = controller.session;

  // Rows: one spare (Ink redraws the whole screen once its output fills it), the footer, the spinner, the status line.
  const available = Math.max(3, rows - 1 - 1 - (running ? 1 : 0) - (state.statusLine ? 1 : 0));
  let live: React.ReactNode;
  if (question?.kind === 'permission' && isPlanApproval(question)) {
    live = <PlanDialog key={question.call.id} question={question} waiting={questions.waiting} glyphs={glyphs} width={columns} onAnswer={(a) => questions.answer(a)} />;
  } else if (question?.kind === 'choice') {
    live = <ChoiceDialog key={questionKey(question)} question={question} waiting={questions.waiting} glyphs={glyphs} width={columns} maxRows={available} onAnswer={(a) => questions.answer(a)} />;
  } else if (question?.kind === 'permission') {
    live = <PermissionDialog key={question.call.id} question={question} waiting={questions.waiting} glyphs={glyphs} paint={paint} width={columns} maxRows={available} onAnswer={(a) => questions.answer(a)} />;
  } else if (question?.kind === 'text') {
    live = <TextQuestion question={question} onAnswer={(a) => questions.answer(a)} />;
  } else if (picker) {
    live = (
      <ResumePicker
        sessions={picker}
        glyphs={glyphs}
        maxRows={available}
        onPick={(id) => {
          setPicker(null);
          if (id) void controller.resume(id);
        }}
      />
    );
  }
  const promptRows = Math.max(2, Math.min(8, Math.floor(available / 2)));
  // A dialog takes the live region over; the view of collapsed output takes the rows of the stream and tools.
  const viewer = viewing && !live && transcript.collapsed.length > 0 ? (
    <OutputViewer outputs={transcript.collapsed} glyphs={glyphs} paint={paint} width={columns} maxRows={Math.max(3, available - promptRows)} onClose={() => setViewing(false)} />
  ) : null;
  let streamRows = live || viewer ? 0 : available - promptRows;
  const toolLines: React.ReactNode[] = [];
  if (!live && !viewer) {
    for (const tool of transcript.tools.values()) {
      if (streamRows <= 0) break;
      toolLines.push(
        <Text key={tool.call.id} wrap="truncate-end">
          <Text color="yellow">{glyphs.bullet}</Text> {toolTitle(tool.call, paint)}
        </Text>,
      );
      streamRows--;
      for (const line of transcript.toolTail(tool, Math.min(3, streamRows))) {
        toolLines.push(
          <Text key={`${tool.call.id}:${toolLines.length}`} dimColor wrap="truncate-end">
            {'  '}
            {line}
          </Text>,
        );
        streamRows--;
      }
    }
  }
  const partial = transcript.partial(streamRows, columns);

  return (
    <KeyRouterContext.Provider value={keys}>
      <Static key={finished.key} items={finished.items}>
        {(item) => <Text key={item.id}>{item.text}</Text>}
      </Static>
      {exiting ? null : <Box flexDirection="column">
        {partial ? <Text>{partial}</Text> : null}
        {toolLines}
        {viewer}
        {running ? <Spinner glyphs={glyphs} elapsed={() => transcript.elapsed()} paused={transcript.waiting} tokens={transcript.outputTokens} thinking={transcript.thinking} notice={transcript.notice} /> : null}
        {live}
        {/* Hidden, not unmounted, while a dialog or the picker is up: the draft typed before it appeared is kept. */}
        <Box display={live ? 'none' : 'flex'} flexDirection="column">
          <Prompt
            active={!question && !picker && !viewer}
            glyphs={glyphs}
            width={columns}
            maxRows={promptRows}
            history={controller.history}
            commands={controller.commandNames()}
            cwd={session.cwd}
            onSubmit={submit}
            onEscape={() => {
              if (controller.interrupt()) setHint(null);
            }}
            onCtrlC={(hadText) => {
              if (controller.interrupt() || hadText) return;
              if (armedExit) return exit();
              setArmedExit(true);
              setHint('Press Ctrl+C again to exit');
            }}
            onCtrlD={exit}
            onExpand={() => (transcript.collapsed.length > 0 ? setViewing(true) : setHint('No collapsed tool output to expand'))}
            onCycleMode={() => {
              if (!CYCLE.includes(session.permissionMode)) outsideMode.current = session.permissionMode;
              session.permissionMode = nextCycleMode(session.permissionMode, outsideMode.current);
              setModeTick((n) => n + 1);
            }}
          />
        </Box>
        {state.statusLine ? <Text wrap="truncate-end">{state.statusLine}</Text> : null}
        <Footer glyphs={glyphs} model={session.model} mode={session.permissionMode} contextTokens={state.contextTokens} contextWindow={state.contextWindow} cost={state.cost} hint={hint} />
      </Box>}
    </KeyRouterContext.Provider>
  );
}
