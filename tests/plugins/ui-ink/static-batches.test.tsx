/**
 * Finished lines reach the scrollback even when the transcript announces two frames before React renders once:
 * a render reads only the latest frame, and a batch seen only in the skipped one was lost (a tool's result block
 * missing from the scrollback under load).
 */
import { EventEmitter } from 'node:events';
import React from 'react';
import { render, Static, Text } from 'ink';
import { describe, expect, it } from 'vitest';
import { useStaticBatches } from '../../../plugins/ui-ink/app/useStaticBatches.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import { Transcript } from '../../../plugins/ui-ink/transcript.js';
import { until } from '../../helpers/until.js';

class FakeTerminal extends EventEmitter {
  isTTY = true;
  columns = 80;
  rows = 20;
  writes: string[] = [];
  write(chunk: unknown): boolean {
    this.writes.push(String(chunk));
    return true;
  }
}

function Scrollback(props: { transcript: Transcript }): React.ReactElement {
  const finished = useStaticBatches(props.transcript);
  return (
    <Static key={finished.key} items={finished.items}>
      {(item) => <Text key={item.id}>{item.text}</Text>}
    </Static>
  );
}

describe('finished lines', () => {
  it('are all written once, when two frames are announced before a render', async () => {
    const transcript = new Transcript({ paint: makePaint(false), glyphs: glyphsFor({ LANG: 'C.UTF-8' }), width: () => 80, frameMs: 1 });
    const stdout = new FakeTerminal();
    const app = render(<Scrollback transcript={transcript} />, { stdout: stdout as unknown as NodeJS.WriteStream, patchConsole: false });
    try {
      for (let round = 0; round < 5; round++) {
        // Each endTurn() announces a frame at once: two in one tick, before React renders.
        transcript.print(`block ${round}a`);
        transcript.endTurn();
        transcript.print(`block ${round}b`);
        transcript.endTurn();
        await new Promise((r) => setTimeout(r, 20));
      }
      const written = await until(() => {
        const all = stdout.writes.join('');
        return all.includes('block 4b') && all;
      }, 'the last block to be written');
      for (let round = 0; round < 5; round++) {
        for (const half of ['a', 'b']) expect(written.split(`block ${round}${half}`).length - 1, `block ${round}${half}`).toBe(1);
      }
    } finally {
      app.unmount();
      transcript.dispose();
    }
  });
});
