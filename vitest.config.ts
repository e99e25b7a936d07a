import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration files start a server and a database each; give them room on a 2-core box.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
