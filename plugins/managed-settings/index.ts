/**
 * Holds what managed settings pin while a session runs, whoever tries to change it afterwards: an SDK host's
 * `set_model` / `set_permission_mode`, a custom command's `model:`, a UI's mode cycle, plan mode's way back.
 * The face adds this plugin itself whenever a managed file exists (no preset or `disable` can leave it out);
 * the rules themselves are the permissions plugin's, the server lists the MCP bridge's.
 */
import { definePlugin, Stage, type Session } from '../../kernel/index.js';

const NAME = 'managed-settings';
/** Before every other tap, so no decision is made under a mode or model the policy does not allow. */
const BEFORE_ALL = Stage.FIRST * 1000;

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    const policy = kernel.config.managed;
    if (!policy) return;
    const warned = new WeakSet<Session>();
    const warnOnce = (session: Session, message: string) => {
      if (warned.has(session)) return;
      warned.add(session);
      kernel.log('warn', message, NAME);
    };

    const bypassOff = policy.disableBypassPermissionsMode;
    if (bypassOff) {
      const clamp = (session: Session) => {
        if (session.permissionMode !== 'auto') return;
        session.permissionMode = 'ask';
        warnOnce(session, `the auto (bypassPermissions) mode is disabled by managed settings (${bypassOff}); the session is back in ask mode`);
      };
      kernel.hooks.selectTools.tapPromise({ name: NAME, stage: BEFORE_ALL }, async (tools, turn) => {
        clamp(turn.session);
        return tools;
      });
      kernel.hooks.prePermission.tapPromise({ name: NAME, stage: BEFORE_ALL }, async (_call, turn) => {
        clamp(turn.session);
        return undefined;
      });
    }

    const pinned = policy.model;
    if (pinned) {
      kernel.hooks.query.tapPromise({ name: NAME, stage: BEFORE_ALL }, async (request, turn) => {
        const session = turn.session;
        // Requests for the small model (titles, compaction) keep it; the conversation's model is pinned.
        if (request.tier === 'main') request.model = pinned.value;
        if (session.model === pinned.value) return undefined;
        warnOnce(session, `model ${session.model} is not allowed: managed settings pin ${pinned.value} (${pinned.file})`);
        session.model = pinned.value;
        return undefined;
      });
    }
  },
}));
