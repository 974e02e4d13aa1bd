/** Where a session lives in Redis. Other tools (a fleet worker, a dashboard) may read these names: they are a contract. */
export const KEY_PREFIX = 'keel:session:';
/** One stream per session, one entry per record (field `r`: the record's JSON). */
export const streamKey = (id: string): string => `${KEY_PREFIX}${id}`;
/** The writer's lock: `{token, pid, host}` as JSON, with an expiry its holder keeps extending. */
export const lockKey = (id: string): string => `${KEY_PREFIX}${id}:lock`;
/** Every session by last activity (ms), and a project's. */
export const ALL_SESSIONS = 'keel:sessions';
export const projectSessions = (projectRoot: string): string => `keel:sessions:project:${projectRoot}`;
