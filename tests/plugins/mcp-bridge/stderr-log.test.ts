import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StderrLog } from '../../../plugins/mcp-bridge/stderr-log.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'keel-stderr-log-'));
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (from: number, count: number) => Buffer.from(Array.from({ length: count }, (_, i) => `line ${String(from + i).padStart(4, '0')}\n`).join(''));

describe('StderrLog', () => {
  it('rotates at the cap, drops a second fill within the minute with a count, and rotates again after it', () => {
    vi.useFakeTimers({ now: new Date('2026-12-07T00:00:00Z'), toFake: ['Date'] });
    const file = path.join(dir, 's.log');
    const log = new StderrLog(file, 1000);
    log.write(lines(0, 100)); // 1000 bytes: exactly the cap
    expect(statSync(file).size).toBe(1000);
    log.write(lines(100, 50)); // over: the first rotation
    expect(readFileSync(`${file}.1`, 'utf8')).toBe(lines(0, 100).toString());
    log.write(lines(150, 60)); // fills the new file again within the minute: dropped
    log.write(lines(210, 10));
    const during = readFileSync(file, 'utf8');
    expect(during).toContain('line 0100');
    expect(during).toContain('dropping its output until the next rotation');
    expect(during).not.toContain('line 0150');
    expect(during).not.toContain('line 0210');
    vi.setSystemTime(new Date('2026-12-07T00:01:01Z'));
    log.write(lines(220, 1)); // a minute later: rotated again, and the count comes first
    const after = readFileSync(file, 'utf8');
    expect(after.indexOf('70 lines (700 bytes) of stderr were dropped')).toBeGreaterThan(-1);
    expect(after.indexOf('70 lines')).toBeLessThan(after.indexOf('line 0220'));
    expect(readFileSync(`${file}.1`, 'utf8')).toContain('line 0100');
    log.close();
  });

  it('counts a file that was already there, and keeps writing nothing once its folder is gone', () => {
    const file = path.join(dir, 'old.log');
    writeFileSync(file, 'x'.repeat(900));
    const log = new StderrLog(file, 1000);
    log.write(lines(0, 20)); // 900 + 200 > 1000: rotated at once
    expect(statSync(`${file}.1`).size).toBe(900);
    rmSync(dir, { recursive: true, force: true });
    expect(() => log.write(lines(20, 200))).not.toThrow();
    expect(() => log.close()).not.toThrow();
    expect(existsSync(file)).toBe(false);
  });

  it('keeps the last line the server wrote, to name why it exited', () => {
    const log = new StderrLog(path.join(dir, 'l.log'), 1000);
    log.write(Buffer.from('starting\nError: cannot open the database\n\n'));
    expect(log.lastLine).toBe('Error: cannot open the database');
    log.close();
  });
});
