/**
 * The Ink UI bundle (dist/bin/ui/) is built with React's production builds (the development builds check and warn on
 * every render), and Ink wraps text with the string-width that measures ASCII without the grapheme segmenter: both
 * made drawing a long transcript several times slower (bench/RESULTS.md, issue 33).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux } from '../helpers/tmux.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const UI = path.resolve(here, '../../dist/bin/ui');
const BUILTINS = path.resolve(here, 'fixtures/builtins.mjs');

const fixture = terminalFixture();

/** The library files a bundle was built from, read from its source map. */
function sourcesOf(file: string): string[] {
  return (JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] }).sources;
}

describe('the Ink UI bundle', () => {
  it('holds React, its reconciler and JSX runtime as their production builds, none as development builds', () => {
    const bundles = readdirSync(UI, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
    const sources = bundles.flatMap((f) => sourcesOf(path.join(UI, f)));
    const react = sources.filter((s) => /node_modules\/(react|react-reconciler)\/cjs\//.test(s));
    expect(react.some((s) => s.endsWith('react-reconciler.production.js'))).toBe(true);
    expect(react.some((s) => s.endsWith('react-jsx-runtime.production.js'))).toBe(true);
    expect(react.filter((s) => s.includes('.development.'))).toEqual([]);
  });

  it("holds one string-width, the top-level 8.x that Ink's wrap-ansi is given too (package.json overrides)", () => {
    const bundles = readdirSync(UI, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
    const widths = bundles.flatMap((f) => sourcesOf(path.join(UI, f))).filter((s) => s.endsWith('/string-width/index.js'));
    expect(widths.map((s) => s.replace(/^(\.\.\/)+/, ''))).toEqual(['node_modules/string-width/index.js']);
    const version = (JSON.parse(readFileSync(path.resolve(UI, '../../../node_modules/string-width/package.json'), 'utf8')) as { version: string }).version;
    expect(Number(version.split('.')[0])).toBeGreaterThanOrEqual(8);
  });

  it.skipIf(!hasTmux)("starting the Ink UI loads no undici (yoga's wasm is decoded without fetch)", async () => {
    const ws = fixture.workspace();
    const file = path.join(ws.home, 'builtins.txt');
    // No server: the UI starts without a request (the base URL is a closed loopback port).
    const term = fixture.terminal({ ws, env: { NODE_OPTIONS: `--import=${BUILTINS}`, BUILTINS_FILE: file } });
    await term.waitFor(/ask mode/);
    term.keys('C-d');
    await term.waitFor(/EXIT=0/);
    const builtins = readFileSync(file, 'utf8').split('\n');
    // Not vacuous: the list is the process's, and the UI's layout engine ran.
    expect(builtins).toContain('NativeModule tty');
    expect(builtins.filter((m) => m.includes('undici'))).toEqual([]);
  });
});
