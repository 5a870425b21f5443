/**
 * The one way the benchmarks time work: warm up once, then repeat over all inputs until
 * SECONDS (default 1) have passed, and report operations per second.
 */
export const seconds = Number(process.env.SECONDS ?? 1);

export function opsPerSecond(work: (index: number) => void, count: number): number {
  for (let i = 0; i < count; i++) work(i); // warm up
  let ops = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  do {
    for (let i = 0; i < count; i++) work(i);
    ops += count;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  } while (elapsed < seconds);
  return ops / elapsed;
}
