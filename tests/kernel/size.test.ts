/**
 * The kernel stays small (DESIGN.md, issue 26): at most 2,000 lines of code in kernel/, counted as cloc counts
 * them — blank lines and comment lines left out, since the kernel's JSDoc is the plugin author's reference.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const kernelDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../kernel');
const LIMIT = 2000;

/** Lines that hold code: not blank, not inside a block comment, not a `//` comment line. */
export function codeLines(text: string): number {
  let inBlock = false;
  let count = 0;
  for (const raw of text.split('\n')) {
    let line = raw.trim();
    if (inBlock) {
      const end = line.indexOf('*/');
      if (end === -1) continue;
      inBlock = false;
      line = line.slice(end + 2).trim();
    }
    while (line.startsWith('/*')) {
      const end = line.indexOf('*/', 2);
      if (end === -1) {
        inBlock = true;
        line = '';
        break;
      }
      line = line.slice(end + 2).trim();
    }
    if (line !== '' && !line.startsWith('//')) count++;
  }
  return count;
}

function kernelSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return kernelSources(file);
    return /\.(ts|tsx|mts|cts)$/.test(entry.name) ? [file] : [];
  });
}

describe("the kernel's size", () => {
  it(`is at most ${LIMIT} lines of code`, () => {
    const files = kernelSources(kernelDir).map((file) => ({ file: path.basename(file), code: codeLines(readFileSync(file, 'utf8')) }));
    const total = files.reduce((sum, f) => sum + f.code, 0);
    const largest = [...files].sort((a, b) => b.code - a.code).slice(0, 3).map((f) => `${f.file} ${f.code}`).join(', ');
    expect(total, `kernel/ has ${total} lines of code (largest: ${largest}); move what is not every face's job into a plugin or cli/`).toBeLessThanOrEqual(LIMIT);
  });

  it('counts code lines, not comments or blank lines', () => {
    const text = ['/**', ' * A doc comment.', ' */', 'export const a = 1; // trailing', '', '// a line comment', '/* one-line block */', 'const b = /* inline */ 2;', '/* opens', 'closes */ const c = 3;'].join('\n');
    expect(codeLines(text)).toBe(3);
  });
});
