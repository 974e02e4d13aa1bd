/**
 * The transcript's finished lines, every batch of them. The transcript hands each batch over in a new frame, and it
 * may announce two frames before React renders once (a render reads only the latest): a batch seen only in the
 * skipped frame would never reach the scrollback. So each batch is collected when it is announced and kept until a
 * render of <Static> has written it.
 */
import { useLayoutEffect, useRef, useSyncExternalStore } from 'react';
import type { StaticItem, Transcript } from '../transcript.js';

interface Batches {
  /** The transcript's last frame whose batch is collected. */
  seen: number;
  /** <Static>'s key: a new one for each batch collected, so it writes the items it holds then. */
  key: number;
  /** Collected and not yet written, oldest first. */
  items: StaticItem[];
}

export function useStaticBatches(transcript: Transcript): { key: number; items: StaticItem[] } {
  const batches = useRef<Batches | null>(null);
  batches.current ??= { seen: transcript.frame.staticKey, key: 0, items: [...transcript.frame.staticItems] };
  const collect = () => {
    const b = batches.current!;
    const frame = transcript.frame;
    if (frame.staticKey === b.seen) return;
    b.seen = frame.staticKey;
    b.items = [...b.items, ...frame.staticItems];
    b.key++;
  };
  useSyncExternalStore(
    (listener) =>
      transcript.subscribe(() => {
        collect();
        listener();
      }),
    () => transcript.frame,
  );
  collect();
  const { key, items } = batches.current;
  const written = items.length;
  useLayoutEffect(() => {
    // What this render's <Static> wrote leaves the queue (it is the queue's start: batches are only appended).
    batches.current!.items = batches.current!.items.slice(written);
  });
  return { key, items };
}
