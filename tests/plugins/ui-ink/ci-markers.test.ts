import { describe, expect, it } from 'vitest';
import { importWithoutCiMarkers } from '../../../plugins/ui-ink/ci-markers.js';

describe('importWithoutCiMarkers', () => {
  it('hides CI and CONTINUOUS_INTEGRATION while the import runs, then puts them back; other variables are untouched', async () => {
    const env: NodeJS.ProcessEnv = { CI: 'true', CONTINUOUS_INTEGRATION: '1', CI_JOB_ID: '7', PATH: '/bin' };
    const seen = await importWithoutCiMarkers(async () => ({ ...env }), env);
    expect(seen).toEqual({ CI_JOB_ID: '7', PATH: '/bin' });
    expect(env).toEqual({ CI: 'true', CONTINUOUS_INTEGRATION: '1', CI_JOB_ID: '7', PATH: '/bin' });
  });

  it('puts them back when the import fails', async () => {
    const env: NodeJS.ProcessEnv = { CI: '1' };
    await expect(importWithoutCiMarkers(() => Promise.reject(new Error('no ink')), env)).rejects.toThrow('no ink');
    expect(env).toEqual({ CI: '1' });
  });

  it('keeps a value set meanwhile, and adds none that was not there', async () => {
    const env: NodeJS.ProcessEnv = { CI: 'true' };
    await importWithoutCiMarkers(async () => {
      env.CI = 'set-by-someone-else';
    }, env);
    expect(env).toEqual({ CI: 'set-by-someone-else' });
  });
});
