import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/postgres/ holds what only a PostgreSQL server can show (outages,
    // crashes, server processes sharing a database): it runs when DATABASE_URL
    // names one, as in CI.
    exclude: process.env.DATABASE_URL ? [] : ['test/postgres/**'],
    globalSetup: ['test/helpers/globalSetup.ts'],
    // Two files at a time on a 2-core box: integration files also wait on PostgreSQL and child processes.
    maxWorkers: 2,
    // Integration files start a server and a database each; give them room on a 2-core box.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
