import readline from 'node:readline';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { PromptKeys } from '../../../plugins/ui-plain/keys.js';

const entries = ['fix the parser', 'deploy the app', 'one\ntwo\nthree'];
const find = (query: string, before = entries.length) => {
  for (let i = Math.min(before, entries.length) - 1; i >= 0; i--) if (entries[i].includes(query)) return { index: i, entry: entries[i] };
  return null;
};

/** A readline on a fake terminal, its keys filtered by PromptKeys, as run.ts sets them up. */
function setup() {
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => input });
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: 80 });
  output.resume();
  const before = input.listeners('keypress');
  const rl = readline.createInterface({ input, output, terminal: true });
  const events = { escape: 0, cycle: 0 };
  const keys = new PromptKeys({ rl, input, before, find, columns: () => 80, dumb: false, write: () => undefined, onEscape: () => events.escape++, onCycleMode: () => events.cycle++ });
  const sent: string[] = [];
  rl.on('line', (line) => sent.push(keys.take(line)));
  rl.setPrompt('> ');
  const type = async (bytes: string) => {
    input.write(bytes);
    await new Promise((r) => setImmediate(r));
  };
  return { rl, keys, sent, events, type, close: () => (keys.dispose(), rl.close()) };
}

let current: ReturnType<typeof setup> | undefined;
afterEach(() => {
  current?.close();
  current = undefined;
});

describe('ui-plain keys', () => {
  it('a bracketed paste of several lines becomes one placeholder, sent expanded with the line', async () => {
    const t = (current = setup());
    await t.type('see ');
    await t.type('\x1b[200~a\r\nb\rc\r\x1b[201~');
    expect(t.rl.line).toBe('see [pasted 3 lines]');
    expect(t.sent).toEqual([]);
    await t.type('!\r');
    expect(t.sent).toEqual(['see a\nb\nc!']);
  });

  it('a one-line paste is typed, its controls dropped; Esc and Shift+Tab go to the UI, not the line', async () => {
    const t = (current = setup());
    await t.type('\x1b[200~just\tthis\x1b[201~');
    expect(t.rl.line).toBe('just this');
    await t.type('\x1b[Z');
    expect(t.events.cycle).toBe(1);
    expect(t.rl.line).toBe('just this');
  });

  it('Ctrl+R shows the search in the prompt, Ctrl+C cancels it back to the line', async () => {
    const t = (current = setup());
    await t.type('draft');
    await t.type('\x12dep');
    expect(t.rl.getPrompt()).toBe("(reverse-i-search)'dep': ");
    expect(t.rl.line).toBe('deploy the app');
    await t.type('\x03');
    expect(t.keys.searching).toBe(false);
    expect(t.rl.getPrompt()).toBe('> ');
    expect(t.rl.line).toBe('draft');
    expect(t.rl.cursor).toBe(5);
  });

  it('a paste during the search adds to the query; a multi-line match sent with Enter goes whole', async () => {
    const t = (current = setup());
    await t.type('\x12\x1b[200~tw\x1b[201~');
    expect(t.rl.line).toBe('two [3 lines]');
    await t.type('\r');
    expect(t.sent).toEqual(['one\ntwo\nthree']);
  });

  it('Ctrl+E takes the match into the line with the cursor at its end', async () => {
    const t = (current = setup());
    await t.type('\x12parser\x05');
    expect(t.keys.searching).toBe(false);
    expect(t.rl.line).toBe('fix the parser');
    expect(t.rl.cursor).toBe('fix the parser'.length);
    await t.type(' now\r');
    expect(t.sent).toEqual(['fix the parser now']);
  });
});
