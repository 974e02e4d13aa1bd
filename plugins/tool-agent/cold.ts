/** Starting and running sub-agents, loaded on the first `agent` call. */
export { processTracker, runSubagent } from './run.js';
