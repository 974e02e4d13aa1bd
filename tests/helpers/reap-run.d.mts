/** Ends the tmux servers, processes and temp folders that carry `marker`. */
export function cleanRun(marker: string): void;
