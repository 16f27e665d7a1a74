import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // chDB allows one data directory per process, so every test file gets its own process.
    pool: 'forks',
    // A test file spends most of its time waiting on engines, child processes and the network,
    // so more files than cores run at once (override: --maxWorkers).
    maxWorkers: 3,
    globalSetup: ['test/support/global-setup.ts'],
    // Limits that catch a hang, not a slow machine: CI runs three files at once beside other work.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
