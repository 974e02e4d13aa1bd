import { definePlugin, Stage, type Decision } from '../../kernel/index.js';

const NAME = 'policy-strict';

/**
 * A stricter policy on top of `permissions`: every session runs in `manual` mode whatever the config says,
 * network tools are removed from requests and refused, and `bash` runs only when the sandbox confines it
 * (sandbox on and required, whatever the config says).
 */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  dependencies: ['permissions', 'sandbox'],
  apply(kernel) {
    // The policy owns these settings: the sandbox reads them when each command runs.
    const sandbox = (kernel.config.sandbox ?? {}) as Record<string, unknown>;
    (kernel.config as Record<string, unknown>).sandbox = { ...sandbox, enabled: true, allowUnsandboxed: false };

    kernel.hooks.sessionStart.tapPromise({ name: NAME, stage: Stage.LATE }, async (session) => {
      if (session.permissionMode !== 'manual') kernel.log('info', `policy-strict: permission mode ${session.permissionMode} → manual`, NAME);
      session.permissionMode = 'manual';
    });

    kernel.hooks.selectTools.tapPromise({ name: NAME, stage: Stage.LATE }, async (tools) => tools.filter((tool) => tool.permission !== 'network'));

    kernel.hooks.prePermission.tapPromise({ name: NAME, stage: Stage.FIRST }, async (call, turn): Promise<Decision | undefined> => {
      // A mode switched during the session (a UI key, an SDK host) does not outlive the next call.
      turn.session.permissionMode = 'manual';
      const tool = kernel.tools.get(call.name);
      if (tool?.permission === 'network') return { behavior: 'deny', reason: `Permission denied: the strict policy allows no network tools (${call.name})` };
      if (call.name === 'bash' && !kernel.services.get('sandbox')) return { behavior: 'deny', reason: 'Permission denied: the strict policy runs bash only inside the sandbox, and this build has none' };
      return undefined;
    });
  },
}));
