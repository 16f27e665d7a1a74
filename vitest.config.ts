import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // chDB allows one data directory per process, so every test file gets its own process.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
