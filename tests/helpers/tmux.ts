/**
 * A real pseudo-terminal for UI tests: tmux on a private socket (`tmux -L keel-ui-<random>`), one session,
 * keys in with send-keys, the screen out with capture-pane, and the bytes the program wrote with pipe-pane.
 * `kill()` ends the tmux server of the socket; tests call it in afterEach.
 */
import { runMarker } from './run-marker.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { KEEL_BIN, NODE_PATH } from './cli.js';
import { until } from './until.js';
import { QUIET_MS } from '../../plugins/ui-ink/app/typeahead.js';

export const hasTmux = spawnSync('tmux', ['-V']).status === 0;

export interface Terminal {
  socket: string;
  /** The visible screen, as text. */
  screen(): string;
  /** The visible screen with its attributes and colours as SGR sequences (capture-pane -e). */
  styledScreen(): string;
  /** The whole pane: its scrollback history and the screen. */
  history(): string;
  /** Keys by tmux name (`Enter`, `Escape`, `C-c`, `Up`, `BTab`) or literal text with `type`. */
  keys(...keys: string[]): void;
  type(text: string): void;
  /**
   * Pastes `text` as a terminal does (tmux paste-buffer -p): wrapped in bracketed-paste markers when the program
   * turned DEC mode 2004 on, line ends sent as carriage returns.
   */
  paste(text: string): void;
  /** Pastes the contents of `file` the same way (tmux load-buffer: a paste too large for a command line). */
  pasteFile(file: string): void;
  /**
   * Waits until the screen (or the history) matches `pattern` (a string: contains it), else throws with what was
   * there; returns what matched. Poll with this after every key: the screen is read as tmux has it, mid-frame
   * perhaps, and a program on a loaded machine draws late.
   */
  waitFor(pattern: RegExp | string, opts?: { history?: boolean; timeoutMs?: number }): Promise<string>;
  /** The whole pane with lines the terminal wrapped joined again (as they were written). */
  joinedHistory(): string;
  /** Resizes the window (the program gets SIGWINCH). */
  resize(width: number, height: number): void;
  /** The pid of the command the pane's shell runs now (keel while it runs), if any. */
  programPid(): number | undefined;
  /** Starts recording every byte the program writes to the terminal into `file`. */
  record(file: string): void;
  /** Stops recording; resolves once every byte recorded is in the file (tmux pipes them through `cat`, which may lag). */
  stopRecording(): Promise<void>;
  kill(): void;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Starts `keel <args>` in a new terminal of `width`×`height`; the shell prints EXIT=<code> when it ends. */
export function startKeelTerminal(opts: { cwd: string; env: Record<string, string>; args?: string[]; width?: number; height?: number; history?: number }): Terminal {
  const socket = `keel-ui-${runMarker}-${randomBytes(6).toString('hex')}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const env = { LANG: 'C.UTF-8', TERM: 'xterm-256color', ...opts.env };
  // `env -i`: only what the test gives reaches keel (no CI variable, which would switch Ink to CI output).
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
  const command = `env -i PATH=${shellQuote(NODE_PATH)} ${assignments.join(' ')} ${shellQuote(KEEL_BIN)} ${(opts.args ?? []).map(shellQuote).join(' ')}; echo EXIT=$?; sleep 600`;
  tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'ui', '-x', String(opts.width ?? 100), '-y', String(opts.height ?? 30), '-c', opts.cwd, 'bash', '--norc', '--noprofile', '-c', command);
  tmux('set-option', '-t', 'ui', 'history-limit', String(opts.history ?? 50000));
  let recording: string | undefined;
  const terminal: Terminal = {
    socket,
    screen: () => tmux('capture-pane', '-p', '-t', 'ui'),
    styledScreen: () => tmux('capture-pane', '-p', '-e', '-t', 'ui'),
    history: () => tmux('capture-pane', '-p', '-S', '-', '-E', '-', '-t', 'ui'),
    keys: (...keys) => void tmux('send-keys', '-t', 'ui', ...keys),
    type: (text) => void tmux('send-keys', '-t', 'ui', '-l', text),
    paste: (text) => {
      tmux('set-buffer', '-b', 'keel-paste', '--', text);
      tmux('paste-buffer', '-p', '-d', '-b', 'keel-paste', '-t', 'ui');
    },
    pasteFile: (file) => {
      tmux('load-buffer', '-b', 'keel-paste', file);
      tmux('paste-buffer', '-p', '-d', '-b', 'keel-paste', '-t', 'ui');
    },
    async waitFor(pattern, { history = false, timeoutMs = 30_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      let seen = '';
      while (Date.now() < deadline) {
        seen = history ? terminal.history() : terminal.screen();
        if (typeof pattern === 'string' ? seen.includes(pattern) : pattern.test(seen)) return seen;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the terminal never showed ${typeof pattern === 'string' ? JSON.stringify(pattern) : pattern} within ${timeoutMs} ms; it showed:\n${seen}`);
    },
    joinedHistory: () => tmux('capture-pane', '-p', '-J', '-S', '-', '-E', '-', '-t', 'ui'),
    resize: (width, height) => void tmux('resize-window', '-t', 'ui', '-x', String(width), '-y', String(height)),
    programPid() {
      const shell = tmux('display-message', '-p', '-t', 'ui', '#{pane_pid}').trim();
      const child = spawnSync('pgrep', ['-P', shell], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
      return child ? Number(child) : undefined;
    },
    record(file) {
      recording = file;
      rmSync(`${file}.done`, { force: true });
      // `cat` ends once tmux closes the pipe and it has written everything: then it leaves a mark.
      tmux('pipe-pane', '-o', '-t', 'ui', `cat >> ${shellQuote(file)}; : > ${shellQuote(`${file}.done`)}`);
    },
    async stopRecording() {
      tmux('pipe-pane', '-t', 'ui');
      const file = recording;
      recording = undefined;
      if (!file) return;
      await until(() => existsSync(`${file}.done`), `the recording of ${file} to be written`);
      rmSync(`${file}.done`, { force: true });
    },
    kill: () => void spawnSync('tmux', ['-L', socket, 'kill-server']),
  };
  return terminal;
}

/**
 * Waits until the screen shows a dialog, then as long as a person takes to read it: a dialog that asks for a
 * decision takes no answer typed sooner after it appeared (plugins/ui-ink/app/typeahead.ts). Not a race: keel timed
 * the dialog from when it drew it, before this saw it, so the quiet has passed for keel too.
 */
export async function waitForDialog(t: Terminal, pattern: RegExp | string, opts?: { timeoutMs?: number }): Promise<string> {
  const screen = await t.waitFor(pattern, opts);
  await new Promise((r) => setTimeout(r, QUIET_MS + 50));
  return screen;
}

/** Types a line and presses Enter. */
export function send(t: Terminal, text: string): void {
  t.type(text);
  t.keys('Enter');
}

export function readBytes(file: string): string {
  try {
    return readFileSync(file, 'latin1');
  } catch {
    return '';
  }
}

export interface PrivateTmux {
  socket: string;
  /** Runs a tmux command on the private server; throws when it fails. */
  run(args: string[]): string;
  /** Runs a tmux command on the private server, ignoring failure (cleanup). */
  quiet(args: string[]): void;
  /** Stops the private server and every session on it. */
  kill(): void;
}

/** tmux on a private socket (`tmux -L`), so tests never touch a developer's own tmux server. */
export function privateTmux(): PrivateTmux {
  const socket = `keel-test-${process.pid}-${runMarker}-${randomBytes(4).toString('hex')}`;
  return {
    socket,
    run: (args) => execFileSync('tmux', ['-L', socket, ...args]).toString(),
    quiet: (args) => void spawnSync('tmux', ['-L', socket, ...args]),
    kill: () => void spawnSync('tmux', ['-L', socket, 'kill-server']),
  };
}
