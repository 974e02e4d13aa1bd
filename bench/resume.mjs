// Resume at size: time to first prompt (spawn → the first model request reaches the scripted server) and
// peak RSS of `keel --resume <id> -p …` (default preset) for a 10 000-message session and for 100 MB and 1 GB session files
// (long sessions compacted many times), beside a new session as the baseline. Files are generated into a
// temp dir and deleted after. Targets (issue 6): the 10 000-message resume under 300 ms and 150 MB; the
// 1 GB resume's RSS the same as the 100 MB one's. The store alone is also timed in a bare node process.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';
import { exchange, header, lineWriter, messageRecord, words, writeFlatSession } from './session-file.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'keel.js');
const runs = Number(process.env.BENCH_RUNS ?? 5);
const bigBytes = Number(process.env.BENCH_BIG_BYTES ?? 1024 ** 3);
if (!existsSync('/usr/bin/time')) throw new Error('bench/resume.mjs needs /usr/bin/time (Debian package "time")');
if (!existsSync(path.join(root, 'dist', 'plugins', 'session-store', 'index.js'))) throw new Error('bench/resume.mjs needs a build: npm run build');

const jiti = createJiti(import.meta.url);
const { startAnthropicServer, say } = await jiti.import(path.join(root, 'tests/helpers/anthropic-server.ts'));
const { projectDir } = await jiti.import(path.join(root, 'plugins/session-store/paths.ts'));

const base = mkdtempSync(path.join(tmpdir(), 'keel-bench-resume-'));
const home = path.join(base, 'home');
const project = path.join(base, 'project');
mkdirSync(path.join(project, '.git'), { recursive: true });
const dir = projectDir(home, project);
mkdirSync(dir, { recursive: true });

/** A session of `count` messages, no compaction. */
function generateFlat(id, count) {
  writeFlatSession(path.join(dir, `${id}.jsonl`), id, project, count);
}

/**
 * A long session compacted again and again, as compaction keeps the live context under the window: a
 * boundary (a summary plus the latest exchange) every 2 MB of history, then 200 exchanges after the last
 * one. The live context is the same whatever the file size.
 */
function generateCompacted(id, bytes) {
  const file = path.join(dir, `${id}.jsonl`);
  const w = lineWriter(file);
  w.write(header(id, project));
  let turns = 0;
  let written = 0;
  let sinceBoundary = 0;
  let n = 0;
  const boundary = () => {
    const record = {
      type: 'boundary',
      at: Date.now(),
      line: w.lines + 1,
      trigger: 'auto',
      preTokens: 150000,
      postTokens: 9000,
      messages: [{ role: 'user', content: `Summary of the work so far (exchanges 0 to ${n}): ${words.slice(0, 3000)}` }, { role: 'assistant', content: 'Understood.' }, ...exchange(n++, 2000)],
      stats: { turns, costUsd: turns * 0.001 },
    };
    w.write(record);
    written += JSON.stringify(record).length + 1;
    sinceBoundary = 0;
  };
  while (written < bytes) {
    for (const message of exchange(n++, 2000)) {
      if (message.role === 'assistant') turns++;
      const record = messageRecord(message, turns);
      w.write(record);
      const size = JSON.stringify(record).length + 1;
      written += size;
      sinceBoundary += size;
    }
    if (sinceBoundary > 2 * 1024 * 1024) boundary();
  }
  boundary();
  for (let i = 0; i < 200; i++) for (const message of exchange(n++, 300)) w.write(messageRecord(message, message.role === 'assistant' ? ++turns : turns));
  w.close();
  return statSync(file).size;
}

const server = await startAnthropicServer([], { route: () => say('ok') });
const env = { PATH: process.env.PATH, KEEL_HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url };

/**
 * One run under /usr/bin/time: [ms from spawn to the first model request, peak RSS in MB, ms from process
 * start to the session being ready (resumed), read from `--verbose`].
 */
function measure(args) {
  return new Promise((resolve, reject) => {
    const before = server.messageRequests().length;
    const started = Date.now();
    const child = spawn('/usr/bin/time', ['-f', '%e %M', process.execPath, bin, ...args, '--verbose'], { env, cwd: project, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`keel ${args.join(' ')} exited ${code}: ${err}`));
      const request = server.messageRequests()[before];
      const kb = Number(err.trim().split('\n').pop().split(' ')[1]);
      const ready = /ready with \d+ messages, (\d+) ms after process start/.exec(err);
      resolve([request ? request.receivedAt - started : NaN, kb / 1024, ready ? Number(ready[1]) : NaN]);
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The store alone, in a fresh process: [ms to rebuild the messages, peak RSS in MB, messages, bytes streamed]. */
function rebuild(id) {
  const reader = path.join(root, 'dist', 'plugins', 'session-store', 'reader.js');
  const file = path.join(dir, `${id}.jsonl`);
  const script = `const { loadSession } = await import(${JSON.stringify(reader)});
const t = performance.now();
const r = await loadSession(${JSON.stringify(file)}, { sideDir: ${JSON.stringify(file.slice(0, -6))}, warn: () => {} });
console.log(JSON.stringify([performance.now() - t, process.resourceUsage().maxRSS / 1024, r.messages.length, r.bytesStreamed]));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`rebuild of ${id} exited ${code}`))));
  });
}

const rebuilds = [];
async function storeOnly(label, id) {
  const all = [];
  for (let i = 0; i < runs; i++) all.push(await rebuild(id));
  const [ms, rss, messages, streamed] = all.sort((a, b) => a[0] - b[0])[Math.floor(all.length / 2)];
  rebuilds.push({ label, ms, rss, messages, streamed });
}

async function series(label, args, bytes) {
  const ms = [];
  const rss = [];
  const ready = [];
  await measure(args); // warm-up: page cache and code cache, not counted
  for (let i = 0; i < runs; i++) {
    const [t, m, r] = await measure(args);
    ms.push(t);
    rss.push(m);
    ready.push(r);
  }
  return { label, ms: median(ms), rss: median(rss), ready: median(ready), bytes };
}

const mb = (bytes) => (bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0);
try {
  const rows = [];
  rows.push(await series('new session', ['-p', 'hi'], 0));
  generateFlat('flat-10k', 10_000);
  rows.push(await series('resume 10 000 messages', ['--resume', 'flat-10k', '-p', 'next'], statSync(path.join(dir, 'flat-10k.jsonl')).size));
  await storeOnly('10 000 messages', 'flat-10k');
  rmSync(path.join(dir, 'flat-10k.jsonl'));
  const small = generateCompacted('compacted-100m', Math.min(100 * 1024 ** 2, bigBytes));
  rows.push(await series(`resume ${mb(small)} MB, compacted`, ['--resume', 'compacted-100m', '-p', 'next'], small));
  await storeOnly(`${mb(small)} MB, compacted`, 'compacted-100m');
  rmSync(path.join(dir, 'compacted-100m.jsonl'));
  const big = generateCompacted('compacted-big', bigBytes);
  rows.push(await series(`resume ${mb(big)} MB, compacted`, ['--resume', 'compacted-big', '-p', 'next'], big));
  await storeOnly(`${mb(big)} MB, compacted`, 'compacted-big');
  rows.push(await series(`keel sessions (${mb(big)} MB file)`, ['sessions'], big));
  console.log(`session resume, median of ${runs} runs (Node ${process.version})`);
  console.log('ready = process start → session resumed, ready for the prompt; request = spawn → first model request');
  for (const row of rows) {
    const label = row.label.padEnd(34);
    const ms = Number.isNaN(row.ms) ? '     -' : `${row.ms.toFixed(0).padStart(5)} ms`;
    const ready = Number.isNaN(row.ready) ? '     -' : `${row.ready.toFixed(0).padStart(5)} ms`;
    console.log(`${label} ready ${ready}  request ${ms}  ${row.rss.toFixed(0).padStart(4)} MB RSS   file ${mb(row.bytes).padStart(6)} MB`);
  }
  console.log('the store alone (a fresh node process rebuilding the messages; RSS includes Node itself):');
  for (const r of rebuilds) {
    console.log(`  ${r.label.padEnd(32)} ${r.ms.toFixed(0).padStart(5)} ms  ${r.rss.toFixed(0).padStart(4)} MB RSS   ${String(r.messages).padStart(6)} messages, ${mb(r.streamed)} MB streamed`);
  }
  const [baseline, flat, mid, huge] = rows;
  console.log(`10 000 messages: ready after ${flat.ready.toFixed(0)} ms, ${flat.rss.toFixed(0)} MB peak (targets: < 300 ms, < 150 MB); first request +${(flat.ms - baseline.ms).toFixed(0)} ms over a new session`);
  console.log(`RSS ${mb(huge.bytes)} MB file vs ${mb(mid.bytes)} MB file: ×${(huge.rss / mid.rss).toFixed(2)} (target: flat)`);
} finally {
  await server.close();
  rmSync(base, { recursive: true, force: true });
}
