/**
 * The one way the benchmarks time work: warm up, then repeat over all inputs until SECONDS
 * (default 1) have passed, and report operations per second.
 *
 * The warm-up runs for WARMUP seconds (default 0.5), not one pass: V8 keeps recompiling hot
 * code for a while after it first runs, and a worker is timed at the speed it keeps, not the
 * speed of its first few hundred jobs. PHP's side warms up the same way.
 */
export const seconds = Number(process.env.SECONDS ?? 1);
export const warmup = Number(process.env.WARMUP ?? 0.5);

export function opsPerSecond(work: (index: number) => void, count: number): number {
  repeat(work, count, warmup);
  const { ops, elapsed } = repeat(work, count, seconds);
  return ops / elapsed;
}

/** Runs `work` over all inputs, again and again, until `limit` seconds have passed (at least once). */
export function repeat(work: (index: number) => void, count: number, limit: number): { ops: number; elapsed: number } {
  let ops = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  do {
    for (let i = 0; i < count; i++) work(i);
    ops += count;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  } while (elapsed < limit);
  return { ops, elapsed };
}
