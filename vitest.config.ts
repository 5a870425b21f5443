import { defineConfig } from 'vitest/config';

/**
 * Two tiers (see test/helpers/tier.ts): `main` is every test, the reliability ones at a size a
 * person can run often (`npm test`); `reliability` is test/reliability/ at full size, with the
 * cluster (`npm run test:reliability`). CI runs both.
 */
export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The CLI and e2e tests run dist/cli/main.js: built once per run, so they never test a stale build.
    globalSetup: ['test/helpers/build.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'main', include: ['test/**/*.test.ts'], exclude: ['test/reliability/cluster.test.ts'], env: { LQB_TIER: 'main' } },
      },
      {
        extends: true,
        test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'], env: { LQB_TIER: 'reliability' } },
      },
    ],
  },
});
