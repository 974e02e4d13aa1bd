import { describe, expect, it } from 'vitest';
import { visibleControls, visibleControlsKeepingColours, visibleInside } from '../../../plugins/ui-ink/safe-text.js';
import { clean } from '../../../plugins/ui-plain/lines.js';

describe('text from outside the UI, made safe for a terminal', () => {
  it('shows escape sequences and control characters in caret notation, keeping newlines and tabs', () => {
    expect(visibleControls('a\x1b]52;c;eA==\x07b')).toBe('a^[]52;c;eA==^Gb');
    expect(visibleControls('rm -rf ~ #\r\x1b[2Kls')).toBe('rm -rf ~ #^M^[[2Kls');
    expect(visibleControls('x\r\ny\tz\n')).toBe('x\ny\tz\n');
    expect(visibleControls('\x00\x7f')).toBe('^@^?');
  });

  it('shows C1 controls and the bidirectional overrides by code point', () => {
    expect(visibleControls('a\u009b2Jb')).toBe('a<U+009B>2Jb');
    expect(visibleControls('if (admin\u202E \u2066// x\u2069)')).toBe('if (admin<U+202E> <U+2066>// x<U+2069>)');
  });

  it('leaves ordinary text (accents, emoji, wide characters) as it is, the same string', () => {
    const text = 'héllo — 日本語 🎉';
    expect(visibleControls(text)).toBe(text);
  });

  it("keeps a command's colours but nothing else", () => {
    expect(visibleControlsKeepingColours('\x1b[31mred\x1b[39m \x1b]0;title\x07')).toBe('\x1b[31mred\x1b[39m ^[]0;title^G');
  });

  it('copies every string inside plain objects and arrays, and keeps anything else as it is', () => {
    const map = new Map();
    const fn = () => 1;
    const value = { call: { input: { command: 'a\rb', list: ['\x1b'] } }, map, fn, n: 1 };
    const shown = visibleInside(value);
    expect(shown).toEqual({ call: { input: { command: 'a^Mb', list: ['^['] } }, map, fn, n: 1 });
    expect(shown.map).toBe(map);
    expect(value.call.input.command).toBe('a\rb');
  });

  it('the plain UI shows the controls in the same notation (C1 and the bidirectional marks too) and drops only colours', () => {
    expect(clean('a\x1b[2Kb\u009bc\u202Ed\x1b[31;1mred\x1b[0m \x1b]52;c;eA==\x07\r\n')).toBe('a^[[2Kb<U+009B>c<U+202E>dred ^[]52;c;eA==^G\n');
    expect(clean('\x1b[8mhidden\x1b[28m')).toBe('hidden');
  });

  it('is the kernel\'s notation, the one keel -p uses on a terminal', async () => {
    const kernel = await import('../../../kernel/index.js');
    expect(visibleControls).toBe(kernel.visibleControls);
  });
});
