/** tmux on a private socket (`tmux -L`), so tests never touch a developer's own tmux server. */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export interface PrivateTmux {
  socket: string;
  /** Runs a tmux command on the private server; throws when it fails. */
  run(args: string[]): string;
  /** Runs a tmux command on the private server, ignoring failure (cleanup). */
  quiet(args: string[]): void;
  /** Stops the private server and every session on it. */
  kill(): void;
}

export function privateTmux(): PrivateTmux {
  const socket = `keel-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  return {
    socket,
    run: (args) => execFileSync('tmux', ['-L', socket, ...args]).toString(),
    quiet: (args) => void spawnSync('tmux', ['-L', socket, ...args]),
    kill: () => void spawnSync('tmux', ['-L', socket, 'kill-server']),
  };
}
