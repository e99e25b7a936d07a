import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// test/browser drives examples/web in headless Chromium; without Chromium it
// is left out (say so), so `npm test` works on a fresh machine. CI installs
// Chromium first and fails if it is missing, so there it always runs.
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const browserTests = existsSync(chromium);
if (!browserTests) {
  console.log(`test/browser left out: no Chromium at ${chromium} (apt-get install -y --no-install-recommends chromium, or set CHROMIUM_PATH)`);
}

export default defineConfig({
  // One graphql module for our code and Apollo's alike, as under Node: vite
  // would give our files graphql's ESM build (index.mjs) while Apollo loads
  // the CommonJS one, and errors made by one fail the other's `instanceof`
  // (Apollo then rewraps them and drops their `path`).
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    // test/postgres/ holds what only a PostgreSQL server can show (outages,
    // crashes, server processes sharing a database): it runs when DATABASE_URL
    // names one, as in CI.
    // test/routing/ runs integration files again on the partitioned layout:
    // `npm run test:routing` (vitest.routing.config.ts), a step of its own in CI.
    exclude: ['test/routing/**', ...(process.env.DATABASE_URL ? [] : ['test/postgres/**']), ...(browserTests ? [] : ['test/browser/**'])],
    globalSetup: ['test/helpers/globalSetup.ts'],
    // Two files at a time on a 2-core box: integration files also wait on PostgreSQL and child processes.
    maxWorkers: 2,
    // Integration files start a server and a database each; give them room on a 2-core box.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
