/**
 * The Ink UI bundle (dist/bin/ui/) is built with React's production builds (the development builds check and warn on
 * every render), and Ink wraps text with the string-width that measures ASCII without the grapheme segmenter: both
 * made drawing a long transcript several times slower (bench/RESULTS.md, issue 33).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const UI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/bin/ui');

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
});
