import { defineConfig } from 'vitest/config';

// The routing check (test/routing/): it runs chosen integration files on the
// partitioned layout in a vitest of its own (vitest.config.ts), and reads
// what they sent; nothing runs beside it.
export default defineConfig({
  test: {
    include: ['test/routing/**/*.test.ts'],
    maxWorkers: 1,
    testTimeout: 30_000,
    // The integration files it runs take minutes on a 2-core box.
    hookTimeout: 15 * 60_000,
  },
});
