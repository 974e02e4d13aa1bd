/** The bridge's code that runs only once a server is configured or `keel mcp` runs. */
export { announceProjectServers } from './approvals.js';
export { mcpSubcommand } from './command-line.js';

/** The bridge, its connections and the MCP SDK, loaded when servers start (`keel mcp add` needs none of them). */
export const loadBridge = (): Promise<typeof import('./bridge.js')> => import('./bridge.js');
