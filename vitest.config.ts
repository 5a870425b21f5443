import { defineConfig } from 'vitest/config';

/**
 * The tiers (see test/helpers/tier.ts): `main` is every test, the reliability ones at a size a
 * person can run often (`npm test`); `reliability` is test/reliability/ at full size, with the
 * cluster (`npm run test:reliability`); `unit` is the files that need no PHP, Redis, database or
 * build (`npm run test:unit`, seconds). CI runs main and reliability; unit is a part of main.
 */

// The CLI and e2e tests run dist/cli/main.js: built once per run, so they never test a stale build.
const build = ['test/helpers/build.ts'];

/**
 * Read from src/ and the committed fixtures only: no PHP, no Redis, no database, no dist/. A file
 * joins when it stops needing those (test/package/layout.test.ts checks the list names real files).
 */
export const unitFiles = [
  'test/horizon/payload.test.ts',
  'test/cli/output.test.ts',
  'test/connect/redact.linear.test.ts',
  'test/internal/slots.test.ts',
  'test/laravel/payload.test.ts',
  'test/laravel/payload.debian-fixtures.test.ts',
  'test/package/embed.test.ts',
  'test/package/layout.test.ts',
  'test/php/js.differential.test.ts',
  'test/php/unserialize.corpus.test.ts',
  'test/record/NodeRecord.test.ts',
  'test/worker/handlerKeys.test.ts',
  'test/worker/handlers.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: ['test/reliability/cluster.test.ts'],
          globalSetup: build,
          env: { LQB_TIER: 'main' },
        },
      },
      {
        extends: true,
        test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'], globalSetup: build, env: { LQB_TIER: 'reliability' } },
      },
      {
        extends: true,
        test: { name: 'unit', include: unitFiles, env: { LQB_TIER: 'main' } },
      },
    ],
  },
});
