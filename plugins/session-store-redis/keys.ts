/**
 * Where sessions live in Redis. Other tools (a fleet worker, a dashboard) may read these names: they are a contract.
 * Every key starts with the store's prefix (`redisSessions.prefix`, else KEEL_REDIS_SESSION_PREFIX, else `keel:`), so
 * a Redis user can be confined to one prefix: a fleet gives each task's run a prefix of its own and an ACL user that
 * reaches only it.
 */
export const DEFAULT_PREFIX = 'keel:';

export interface SessionKeys {
  readonly prefix: string;
  /** One stream per session, one entry per record (field `r`: the record's JSON). */
  stream(id: string): string;
  /** The writer's lock: `{token, pid, host}` as JSON, with an expiry its holder keeps extending. */
  lock(id: string): string;
  /** Every session by last activity (ms). */
  readonly all: string;
  /** A project's sessions by last activity (ms). */
  project(projectRoot: string): string;
}

export function sessionKeys(prefix: string = DEFAULT_PREFIX): SessionKeys {
  return {
    prefix,
    stream: (id) => `${prefix}session:${id}`,
    lock: (id) => `${prefix}session:${id}:lock`,
    all: `${prefix}sessions`,
    project: (projectRoot) => `${prefix}sessions:project:${projectRoot}`,
  };
}
