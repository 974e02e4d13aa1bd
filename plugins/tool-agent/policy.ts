/** The names and shape of the policy handoff (see handoff.ts and inherit.ts), kept apart so the hot path loads only these. */
export const HANDOFF_VERSION = 1;
/** How config errors and `/permissions` name the handed layer. */
export const HANDOFF_SOURCE = 'the parent agent (handed policy)';
/** The child's file descriptor the handoff is written to. */
export const HANDOFF_FD = 3;
/** Tells the child which descriptor to read; a number only, so forging it gains nothing. */
export const HANDOFF_ENV = 'KEEL_POLICY_FD';

export interface PolicyHandoff {
  version: number;
  /** The parent's plugins by name: the child must run exactly these. */
  plugins: string[];
  /** Settings the child takes above every layer of its own. */
  values: Record<string, unknown>;
}

export interface Rules {
  allow: string[];
  ask: string[];
  deny: string[];
}
