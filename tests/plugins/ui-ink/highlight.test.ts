import { describe, expect, it } from 'vitest';
import { CodeHighlighter, languageOf } from '../../../plugins/ui-ink/highlight.js';
import { MarkdownStream } from '../../../plugins/ui-ink/markdown.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';

const colours = makePaint(true);
const none = makePaint(false);
const plain = (s: string) => s.replace(/\x1b\[[\d;]*m/g, '');

describe('code block highlighting (highlight.js grammars through emphasize)', () => {
  it('knows the common languages and their fence aliases, and no others', () => {
    for (const fence of ['ts', 'tsx', 'typescript', 'js', 'jsx', 'json', 'bash', 'sh', 'python', 'py', 'go', 'rust', 'rs', 'diff', 'yaml', 'yml', 'markdown', 'md', 'css', 'html', 'xml', 'sql']) {
      expect(languageOf(fence), fence).toBeDefined();
    }
    expect(languageOf('')).toBeUndefined();
    expect(languageOf('cobol')).toBeUndefined();
  });

  it('colours keywords, strings and comments, keeping the text', () => {
    const code = new CodeHighlighter('ts', colours);
    const line = code.line('const greeting: string = "hi"; // say it');
    expect(plain(line)).toBe('const greeting: string = "hi"; // say it');
    expect(line).toContain(colours.magenta('const'));
    expect(line).toContain(colours.green('"hi"'));
    expect(line).toContain(colours.gray('// say it'));
  });

  it('keeps a comment that spans lines coloured on its later lines', () => {
    const code = new CodeHighlighter('js', colours);
    code.line('/* a comment');
    const inside = code.line('   still the comment */ let x = 1;');
    expect(inside).toContain(colours.gray('   still the comment */'));
    expect(inside).toContain(colours.magenta('let'));
  });

  it('writes no colour under NO_COLOR, and leaves unknown languages alone', () => {
    expect(new CodeHighlighter('ts', none).line('const a = "b";')).toBe('const a = "b";');
    expect(new CodeHighlighter('cobol', colours).line('MOVE A TO B.')).toBe('MOVE A TO B.');
  });

  it('colours a streamed fenced block in markdown line by line', () => {
    const md = new MarkdownStream(colours, () => 80, glyphsFor({ LANG: 'C.UTF-8' }));
    const lines = md.push('Text\n```python\ndef f():\n    return "x"\n```\n');
    expect(lines.map(plain)).toEqual(['Text', '```python', 'def f():', '    return "x"', '```']);
    expect(lines[2]).toContain(colours.magenta('def'));
    expect(lines[3]).toContain(colours.green('"x"'));
  });
});
