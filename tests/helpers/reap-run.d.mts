/** Ends the tmux servers, processes and temp folders that carry `marker` (and `folders`). */
export function cleanRun(marker: string, options?: { signal?: NodeJS.Signals; tmpBase?: string; folders?: string[] }): void;
