/**
 * Work the sandbox does when the process exits, behind one `exit` listener for the whole process. A process may
 * hold many kernels (an SDK host, the tests): a listener per kernel would pile up on `process` (Node warns past
 * ten) and keep every kernel it closes over alive until exit.
 */
import { rmSync } from 'node:fs';

const tasks = new Set<() => void>();
const tempDirs = new Set<string>();

/** The tasks first (they stop the commands that may still use a temp folder), then the folders. */
function runAll(): void {
  for (const task of [...tasks]) task();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
  sync();
}

function sync(): void {
  const listening = process.listeners('exit').includes(runAll);
  const needed = tasks.size > 0 || tempDirs.size > 0;
  if (needed && !listening) process.on('exit', runAll);
  else if (!needed && listening) process.off('exit', runAll);
}

/** Runs `task` at exit until the returned function is called. */
export function atExit(task: () => void): () => void {
  tasks.add(task);
  sync();
  return () => {
    tasks.delete(task);
    sync();
  };
}

/** Removes the folder `dir` made (with all it holds) at exit. */
export function removeAtExit(dir: string): void {
  tempDirs.add(dir);
  sync();
}
