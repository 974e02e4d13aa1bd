import { definePlugin, type Decision, type PermissionLevel, type PermissionMode } from '../../kernel/index.js';

/** What each mode does with each level when no rule decides. */
export const MATRIX: Record<PermissionMode, Record<PermissionLevel, 'allow' | 'ask'>> = {
  auto: { read: 'allow', write: 'allow', execute: 'allow', network: 'allow' },
  edits: { read: 'allow', write: 'allow', execute: 'ask', network: 'ask' },
  ask: { read: 'allow', write: 'ask', execute: 'ask', network: 'ask' },
  manual: { read: 'ask', write: 'ask', execute: 'ask', network: 'ask' },
};

/** The permission policy: the session's mode crossed with each tool's level. */
export default definePlugin(() => ({
  name: 'permissions',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.hooks.prePermission.tapPromise('permissions', async (call, turn): Promise<Decision | undefined> => {
      const tool = kernel.tools.get(call.name);
      if (!tool) return { behavior: 'deny', reason: `Unknown tool ${call.name}` };
      const verdict = MATRIX[turn.session.permissionMode][tool.permission];
      if (verdict === 'allow') return { behavior: 'allow' };
      return { behavior: 'ask', reason: `${call.name} is a ${tool.permission} tool and the permission mode is ${turn.session.permissionMode}` };
    });
  },
}));
