/** Colours for pre-rendered lines. One chalk instance, levelled once per run (NO_COLOR gives level 0). */
import { Chalk, type ChalkInstance } from 'chalk';

export type Paint = ChalkInstance;

export function makePaint(colors: boolean): Paint {
  return new Chalk({ level: colors ? 2 : 0 });
}
