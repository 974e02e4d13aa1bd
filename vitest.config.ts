import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'tests/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: keep process-heavy e2e files from starving each other.
    maxWorkers: 2,
    pool: 'forks',
    // Gives the run a marker and removes its tmux servers, keel processes and temp folders at the end, Ctrl+C included.
    globalSetup: ['./tests/helpers/global-setup.ts'],
    reporters: ['default', './tests/helpers/summary-reporter.ts'],
  },
});
