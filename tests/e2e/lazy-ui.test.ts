/**
 * Ink, React and syntax highlighting load only in interactive mode: they are an ES module bundle of their own
 * (dist/bin/ui/ink.js), which `keel -p` never imports, which the Ink UI does, and which the start-up snapshot does
 * not hold. Nor does `keel -p` load undici (Node's fetch).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(here, '../../dist/bin');
const TRACE = path.resolve(here, '../plugins/mcp-bridge/fixtures/trace-imports.mjs');
const BUILTINS = path.resolve(here, 'fixtures/builtins.mjs');
const prepare = useScriptedProjects();

/** Bundle files (the CLI and the UI bundle) whose text contains `marker`. */
function filesWith(marker: string): string[] {
  const ui = readdirSync(path.join(BIN, 'ui'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
  const files = ['keel.cjs', ...ui.map((f) => `ui/${f}`)];
  return files.filter((f) => readFileSync(path.join(BIN, f), 'utf8').includes(marker));
}

// Ink's own error text, and highlight.js's (the grammars run through emphasize).
const INK = filesWith('Raw mode is not supported');
const HIGHLIGHT = filesWith('Language definition for');

function loaded(trace: string): string[] {
  return readFileSync(trace, 'utf8').split('\n').filter((url) => url.includes('/dist/bin/'));
}

const fixture = terminalFixture();

describe('the interactive UI loads lazily', () => {
  it('bundles Ink and the highlighter apart from the entry', () => {
    expect(INK.length).toBeGreaterThan(0);
    expect(HIGHLIGHT.length).toBeGreaterThan(0);
    expect(INK).not.toContain('keel.cjs');
    expect(HIGHLIGHT).not.toContain('keel.cjs');
  });

  it('the start-up snapshot holds neither Ink nor the highlighter', () => {
    const blob = readFileSync(path.join(BIN, 'keel.blob'));
    expect(blob.includes('Raw mode is not supported')).toBe(false);
    expect(blob.includes('Language definition for')).toBe(false);
    // The marker test is not vacuous: the snapshot does hold the CLI's own text.
    expect(blob.includes('the preset to assemble')).toBe(true);
  });

  it('keel -p loads neither Ink nor the highlighter', async () => {
    const { env, ws } = await prepare([say('headless answer')]);
    const trace = ws.path('print.trace');
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, NODE_OPTIONS: `--import=${TRACE}`, TRACE_IMPORTS_FILE: trace } });
    expect(run.stdout).toBe('headless answer\n');
    const urls = loaded(trace);
    // The trace sees ES modules only: the UI bundle would be one (keel.cjs is required, not imported).
    expect(readFileSync(trace, 'utf8')).toContain('/bin/keel.js');
    for (const chunk of [...INK, ...HIGHLIGHT]) expect(urls.filter((u) => u.endsWith(chunk))).toEqual([]);
  });

  it('keel -p loads neither undici nor node:http (the SDK and the transport use Keel\'s Headers, response and HTTP client), nor TLS for an http: endpoint', async () => {
    const { env, ws } = await prepare([say('headless answer')]);
    const file = ws.path('builtins.txt');
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, NODE_OPTIONS: `--import=${BUILTINS}`, BUILTINS_FILE: file } });
    expect(run.stdout).toBe('headless answer\n');
    const builtins = readFileSync(file, 'utf8').split('\n');
    expect(builtins).toContain('NativeModule net');
    expect(builtins.filter((m) => m.includes('undici') || /^NativeModule _?http/.test(m))).toEqual([]);
    // An http: endpoint (this loopback server) never loads TLS.
    expect(builtins.filter((m) => /^NativeModule (https|tls|_tls_)/.test(m))).toEqual([]);
  });

  it.skipIf(!hasTmux)('the Ink UI loads both', async () => {
    const { env, ws } = await prepare([]);
    const trace = ws.path('ui.trace');
    const term = fixture.terminal({ ws, env: { ...env, NODE_OPTIONS: `--import=${TRACE}`, TRACE_IMPORTS_FILE: trace } });
    await term.waitFor(/ask mode/);
    const urls = loaded(trace);
    for (const chunk of [...INK, ...HIGHLIGHT]) expect(urls.some((u) => u.endsWith(chunk)), chunk).toBe(true);
  });
});
