// The interactive (Ink) UI in a real terminal: tmux on a private socket, as tests/e2e/ui-ink.test.ts drives it.
// - time from starting `keel` to its first drawn prompt (the status line's "ask mode"), median of BENCH_RUNS (5)
//   starts; the screen is polled with `tmux capture-pane`, so the figure includes up to one poll (~5–10 ms here);
// - keystroke-to-echo latency, p50/p95 over BENCH_KEYS (200) keys typed with `tmux send-keys` while an answer streams
//   (an event every 20 ms), read from the bytes the program writes (tmux pipe-pane: the first write holding the new
//   key in the redrawn input line), against the same keys typed into `cat` (the terminal's own echo: tmux's and the
//   bench's floor).
// Not a test: nothing here asserts a time.
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createJiti } from 'jiti';
import { measure, median, root, runs as defaultRuns, startAnthropicServer } from './lib.mjs';

const jiti = createJiti(import.meta.url);
const { startKeelTerminal, hasTmux } = await jiti.import(path.join(root, 'tests/helpers/tmux.ts'));
if (!hasTmux) {
  console.log('UI figures skipped: no tmux');
  process.exit(0);
}
const runs = Number(process.env.BENCH_RUNS ?? Math.min(defaultRuns, 5));
const keys = Number(process.env.BENCH_KEYS ?? 200);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const base = mkdtempSync(path.join(tmpdir(), 'keel-bench-ui-'));
const project = path.join(base, 'project');
mkdirSync(path.join(project, '.git'), { recursive: true });
// A long answer: 400 text blocks of five events each, one event every 20 ms (about 40 s, longer than the typing).
const blocks = Array.from({ length: 400 }, (_, i) => ({ type: 'text', text: `word${i} and some more words to draw. ` }));
const server = await startAnthropicServer([], { route: () => ({ content: blocks, eventDelayMs: 20 }) });
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

async function until(check, timeoutMs = 30_000) {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting for the terminal');
    await sleep(2);
  }
}

function freshHome(i) {
  const home = path.join(base, `home${i}`);
  mkdirSync(home, { recursive: true });
  return home;
}

/** The bytes written to `file` from `offset` on (only those: the log grows by whole redraws). */
function readSince(file, offset) {
  const fd = openSync(file, 'r');
  try {
    const length = fstatSync(fd).size - offset;
    if (length <= 0) return '';
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, offset);
    return buffer.toString('latin1');
  } finally {
    closeSync(fd);
  }
}

/**
 * Echo latency of `keys` keys typed into a terminal whose program is already waiting for input: from sending the
 * key to the first write, after it, that holds the typed text's last six characters (the input line redrawn with
 * the new key; letters the streamed answer never contains, in a sequence that does not repeat, so an older redraw
 * cannot match). `cat` echoes through the terminal's line discipline, key by key (`redraws` false).
 */
async function echoLatencies(term, redraws = true) {
  const log = path.join(base, `echo-${Date.now()}.bin`);
  term.record(log);
  await sleep(200);
  const size = () => (existsSync(log) ? statSync(log).size : 0);
  const latencies = [];
  let typed = '';
  let seed = 7;
  for (let i = 0; i < keys; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const key = 'qxzjv'[seed % 5];
    typed += key;
    const suffix = redraws ? typed.slice(-6) : key;
    const before = size();
    const started = performance.now();
    term.type(key);
    await until(() => size() > before && readSince(log, before).includes(suffix), 10_000).catch((err) => {
      throw new Error(`key ${i} (${JSON.stringify(suffix)}): ${err.message}; last output ${JSON.stringify(readSince(log, Math.max(0, size() - 300)))}`);
    });
    latencies.push(performance.now() - started);
    await sleep(5);
  }
  term.stopRecording();
  return latencies;
}

// 1. Time to the first drawn prompt.
const firstPrompt = [];
let idle;
for (let i = 0; i < runs; i++) {
  const home = freshHome(i);
  const started = performance.now();
  const term = startKeelTerminal({ cwd: project, width: 300, env: { KEEL_HOME: home, HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url } });
  try {
    await until(() => /ask mode/.test(term.screen()));
    firstPrompt.push(performance.now() - started);
    // The last start also gives the echo at an idle prompt.
    if (i === runs - 1) idle = await echoLatencies(term);
  } finally {
    term.kill();
  }
}
const nodeFloor = [];
for (let i = 0; i < runs; i++) nodeFloor.push((await measure([process.execPath, '-e', '0'], { env: { PATH: process.env.PATH }, cwd: base })).wall * 1000);

// 2. Keystroke echo while an answer streams, and the floor: the same keys into `cat`.
const home = freshHome('echo');
const term = startKeelTerminal({ cwd: project, width: 300, env: { KEEL_HOME: home, HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url } });
let keel;
try {
  await until(() => /ask mode/.test(term.screen()));
  term.type('stream please');
  term.keys('Enter');
  await until(() => /word1 /.test(term.screen()));
  keel = await echoLatencies(term);
} finally {
  term.kill();
}
// `cat` in its own tmux terminal (startKeelTerminal runs keel): tmux directly, in the helper's shape.
const socket = `keel-bench-cat-${process.pid}`;
const tmux = (...args) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'cat', '-x', '300', '-y', '30', 'cat');
let cat;
try {
  cat = await echoLatencies({
    record: (file) => void tmux('pipe-pane', '-o', '-t', 'cat', `cat >> '${file}'`),
    stopRecording: () => void tmux('pipe-pane', '-t', 'cat'),
    type: (text) => void tmux('send-keys', '-t', 'cat', '-l', text),
  }, false);
} finally {
  execFileSync('tmux', ['-L', socket, 'kill-server']);
}
await server.close();
rmSync(base, { recursive: true, force: true });

console.log(`interactive UI in tmux (Node ${process.version})`);
console.log(`  first drawn prompt        median ${median(firstPrompt).toFixed(0)} ms of ${runs} starts (node -e 0: ${median(nodeFloor).toFixed(0)} ms, ×${(median(firstPrompt) / median(nodeFloor)).toFixed(2)})`);
const line = (label, xs) => console.log(`  keystroke echo, ${label.padEnd(22)} p50 ${percentile(xs, 50).toFixed(1).padStart(6)} ms  p95 ${percentile(xs, 95).toFixed(1).padStart(6)} ms  over ${xs.length} keys`);
line('idle prompt', idle);
line('while streaming', keel);
line('streaming, first 50', keel.slice(0, 50));
line('streaming, last 50', keel.slice(-50));
line('cat (floor)', cat);
