/**
 * The Ink UI's modules (Ink, React, the highlighter), imported on first use so headless runs never load them.
 * The binary replaces this module: there the UI is an ES module bundle of its own (Ink uses top-level `await`,
 * which the binary's CommonJS build cannot hold), imported through the host's loader.
 */
export const loadRun = (): Promise<typeof import('./run.js')> => import('./run.js');
