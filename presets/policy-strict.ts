import { definePreset } from '../kernel/index.js';
import policyStrict from '../plugins/policy-strict/index.js';

/**
 * A policy swap: the default agent with the strict policy in front of the permission plugin — every call asked
 * (manual mode), bash only inside the sandbox, no network tools.
 */
export default definePreset({
  name: 'policy-strict',
  description: 'the default agent under a strict policy: manual mode, bash only in the sandbox, no network tools',
  extends: 'default',
  disable: ['tool-web'],
  plugins: [policyStrict()],
});
