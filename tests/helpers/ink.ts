/**
 * Waiting for Ink to draw: a key written to ink-testing-library's stdin is handled at once, but the frame it
 * causes is drawn on a later turn of the event loop, and file or history look-ups later still; on a loaded
 * machine any fixed sleep can be too short. These poll the last frame instead.
 */
import { until } from './until.js';

export interface Drawn {
  lastFrame(): string | undefined;
}

export type FrameCheck = string | RegExp | ((frame: string) => boolean);

function matcher(expected: FrameCheck): (frame: string) => boolean {
  if (typeof expected === 'string') return (frame) => frame.includes(expected);
  if (expected instanceof RegExp) return (frame) => expected.test(frame);
  return expected;
}

/** Waits until the last frame drawn passes `expected` (text it contains, a pattern, or a test) and returns that frame. */
export async function untilFrame(ui: Drawn, expected: FrameCheck, what = String(expected)): Promise<string> {
  const passes = matcher(expected);
  let seen = '';
  try {
    await until(() => passes((seen = ui.lastFrame() ?? '')), `a frame showing ${what}`);
  } catch (err) {
    throw new Error(`${(err as Error).message}; the last frame was:\n${seen}`);
  }
  return seen;
}

/** Writes `key` and waits until the frame differs from the one before it (the key was drawn); returns the new frame. */
export async function pressAndRedraw(ui: Drawn & { stdin: { write(data: string): void } }, key: string, what = `the frame after ${JSON.stringify(key)}`): Promise<string> {
  const before = ui.lastFrame() ?? '';
  ui.stdin.write(key);
  return untilFrame(ui, (frame) => frame !== before, what);
}
