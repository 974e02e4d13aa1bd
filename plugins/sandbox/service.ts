/** The `sandbox` service's contract, typed for every plugin that asks it (the bash tool, before spawning). */
import type { Session } from '../../kernel/index.js';

export interface SandboxedCommand {
  file: string;
  args: string[];
  /**
   * Call once the command and everything it started have ended (also when it failed to start): undoes what it
   * did to protected paths and returns a note for the tool result saying what was put back, if anything.
   */
  finish(): Promise<string | undefined>;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** Wraps a shell command so it runs confined (bubblewrap); the bash tool asks it before spawning. */
    sandbox: {
      /** The argv that runs `command` confined, or null to run it as is (sandbox disabled for this call). */
      wrap(spec: { command: string; cwd: string; session: Session; env: Record<string, string> }): Promise<SandboxedCommand | null>;
    };
  }
}
