import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'tests/**/*.test.tsx'],
    // Generous: CI runs every file on a loaded 2-core machine where one spawned keel can take seconds to start.
    // A timeout only bounds a hang; what a test proves is in its assertions.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Two cores: keep process-heavy e2e files from starving each other.
    maxWorkers: 2,
    pool: 'forks',
    // Gives the run a marker and removes its tmux servers, keel processes and temp folders at the end, Ctrl+C included.
    globalSetup: ['./tests/helpers/global-setup.ts'],
    reporters: ['default', './tests/helpers/summary-reporter.ts'],
  },
});
