import { describe, expect, it } from 'vitest';
import { OutputLog } from '../../../plugins/ui-ink/resize.js';

const ERASE = (n: number) => `${'\x1b[2K\x1b[1A'.repeat(n - 1)}\x1b[2K\x1b[G`;

describe('the output log (what Ink printed above the live region)', () => {
  it('tells printed output from redraws of the live region, the way Ink writes them', () => {
    const log = new OutputLog();
    log.observe('\x1b[?25l');
    log.observe('frame 1\nfooter\n');
    log.observe(`${ERASE(3)}frame 2\nfooter\n`);
    // output: the live region is erased in a write of its own, the output written, then the live region again
    log.observe(ERASE(3));
    log.observe('\x1b[1mprinted line\x1b[22m\n');
    log.observe('frame 3\nfooter\n');
    log.observe('\x1b[?2026h');
    log.observe(`${ERASE(3)}frame 4 is\ntaller\nnow\n`);
    log.observe('\x1b[?2026l');
    expect(log.output).toBe('\x1b[1mprinted line\x1b[22m\n');
    expect(log.liveLines).toBe(3);
    log.observe(ERASE(4));
    log.observe('second printed\n');
    log.observe('frame 5\n');
    expect(log.output).toBe('\x1b[1mprinted line\x1b[22m\nsecond printed\n');
    expect(log.liveLines).toBe(1);
    log.forgetLive();
    expect(log.liveLines).toBe(0);
    log.observe(ERASE(2));
    log.observe('frame 6\n');
    expect(log.output).toBe('\x1b[1mprinted line\x1b[22m\nsecond printed\n');
  });
});

describe('NO_COLOR', () => {
  it('takes every colour out of SGR sequences and keeps the emphasis', async () => {
    const { stripColours } = await import('../../../plugins/ui-ink/nocolor.js');
    expect(stripColours('\x1b[1;31mbold red\x1b[39;22m \x1b[38;5;208mo\x1b[39m \x1b[48;2;1;2;3;7mx\x1b[49;27m \x1b[2mdim\x1b[22m\x1b[m')).toBe(
      '\x1b[1mbold red\x1b[22m o \x1b[7mx\x1b[27m \x1b[2mdim\x1b[22m\x1b[m',
    );
    expect(stripColours('\x1b[38:5:1mcolon\x1b[0m')).toBe('colon\x1b[0m');
  });
});
