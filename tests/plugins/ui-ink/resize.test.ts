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
