/**
 * The two test tiers. `npm test` runs the main tier: every file, the reliability ones at a
 * size a person can run often. `npm run test:reliability` runs test/reliability/ at full size
 * (the million-job soak, a hundred kills, the 500k fuzz, the cluster). vitest.config.ts sets
 * LQB_TIER per project.
 */
export const fullTier = process.env.LQB_TIER === 'reliability';

/** `main` in the main tier, `full` in the reliability tier. */
export function bySize<T>(main: T, full: T): T {
  return fullTier ? full : main;
}
