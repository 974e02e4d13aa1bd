/**
 * One id per `vitest run`, set by tests/helpers/global-setup.ts and inherited by every worker: the tmux sockets,
 * temp folders and keel processes the run makes carry it, so the teardown (also on Ctrl+C) removes exactly this
 * run's leftovers and never another run's on the same machine.
 */
import { randomBytes } from 'node:crypto';

export const RUN_MARKER_VAR = 'KEEL_TEST_RUN';

/** This run's id; a file run outside the global setup gets one of its own. */
export const runMarker: string = (process.env[RUN_MARKER_VAR] ??= `r${randomBytes(4).toString('hex')}`);
