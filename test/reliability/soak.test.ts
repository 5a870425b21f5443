/**
 * Soak: a million jobs in the reliability tier, 20,000 in the main one (or LQB_SOAK_JOBS), through two Node workers and Laravel's own worker on
 * one queue. Every job runs, none twice; the Node workers' memory stays flat; the throughput
 * is printed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { lqb, php, scratch } from '../helpers/processes.js';
import { root } from '../helpers/php.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { bySize } from '../helpers/tier.js';

const JOBS = Number(process.env.LQB_SOAK_JOBS ?? bySize(20_000, 1_000_000));
const QUEUE = 'soak';
const prefix = uniquePrefix('soak');
const s = scratch(prefix, QUEUE);
s.env.LQB_SOAK_FILE = join(s.dir, 'soak.jsonl');
s.env.LQB_SOAK_JOBS = String(JOBS);
// Samples enough for the growth check at either size: a leak of a few KB a job shows in 10,000.
s.env.LQB_SOAK_SAMPLE = String(bySize(1_000, 20_000));

afterAll(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s.remove();
});

describe(`soak: ${JOBS.toLocaleString('en-US')} jobs, two Node workers and one Laravel worker`, () => {
  it('runs every job once, with flat memory', async () => {
    const client = prefixedClient(prefix);
    const queue = new RedisQueue(client, { defaultQueue: QUEUE });
    const template = buildPayload(
      buildJob({ className: 'App\\Jobs\\Bridge\\RecordJob', properties: { n: 0, label: 'soak', ratio: 0.5, items: [], flag: null } }),
    );
    // One payload per number: the same bytes as the builder's, with n, uuid and id made unique.
    const [head, tail] = template.raw.split('s:1:\\"n\\";i:0;');
    for (let i = 0; i < JOBS; i += 10_000) {
      const batch: string[] = [];
      for (let n = i; n < Math.min(i + 10_000, JOBS); n++) {
        const uuid = `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
        batch.push(
          (head + `s:1:\\"n\\";i:${n};` + tail)
            .replace(/"uuid":"[^"]+"/, `"uuid":"${uuid}"`)
            .replace(/"id":"[^"]+"/, `"id":"${n.toString(36).padStart(32, '0')}"`),
        );
      }
      await queue.bulkRaw(batch);
    }
    client.disconnect();
    const started = performance.now();
    const nodeFlags = [
      'work',
      `--handlers=${join(root, 'test/e2e/fixtures/soak-handlers.mjs')}`,
      `--queue=${QUEUE}`,
      '--stop-when-empty',
      '--sleep=0',
      '--concurrency=32',
      '--timeout=0',
      '--memory=1024',
    ];
    const [first, second, laravel] = await Promise.all([
      lqb(nodeFlags, s.env, { timeoutMs: 1_500_000, nodeFlags: ['--expose-gc'] }),
      lqb(nodeFlags, s.env, { timeoutMs: 1_500_000, nodeFlags: ['--expose-gc'] }),
      php(
        'laravel-worker.php',
        [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', '--timeout=0'],
        { ...s.env, LQB_RECORD_FILE: join(s.dir, 'php-runs.jsonl') },
        { timeoutMs: 1_500_000 },
      ),
    ]);
    const seconds = (performance.now() - started) / 1000;
    expect(first.status).toBe(0);
    expect(second.status).toBe(0);
    expect(laravel.status).toBe(0);

    const nodeWorkers = readFileSync(s.env.LQB_SOAK_FILE!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seen: number[]; rss: number[]; heap: number[] });
    const phpRuns = s.phpRuns().map((r) => Number(r.props.n));
    const counts = new Uint8Array(JOBS);
    for (const n of [...nodeWorkers.flatMap((w) => w.seen), ...phpRuns]) counts[n]!++;
    // The job numbers that never ran, and those that ran more than once (the first 20 of each).
    const where = (test: (count: number) => boolean) => [...counts.keys()].filter((n) => test(counts[n]!)).slice(0, 20);
    expect({ missing: where((c) => c === 0), twice: where((c) => c > 1) }).toEqual({ missing: [], twice: [] });

    // From the first tenth of each worker's run to its end: the live heap (after a full
    // collection) is what a leak grows; RSS is reported beside it.
    const growth = (samples: number[]) => (samples.length >= 3 ? samples.at(-1)! / samples[Math.floor(samples.length / 10)]! - 1 : 0);
    const percent = (g: number) => `${(g * 100).toFixed(1)}%`;
    console.log(
      `soak: ${JOBS} jobs in ${seconds.toFixed(1)} s (${Math.round(JOBS / seconds)} jobs/s): Node ${nodeWorkers.map((w) => w.seen.length).join(' + ')}, Laravel ${phpRuns.length}; ` +
        `Node heap growth ${nodeWorkers.map((w) => percent(growth(w.heap))).join(', ')}, RSS growth ${nodeWorkers.map((w) => percent(growth(w.rss))).join(', ')}`,
    );
    // A leak of a few KB a job grows the heap several times over; the main tier's short run has
    // a small heap, whose noise alone is a few per cent, so it is given more room.
    const allowed = bySize(0.25, 0.1);
    for (const worker of nodeWorkers)
      expect(growth(worker.heap), `heap growth of worker ${nodeWorkers.indexOf(worker) + 1}`).toBeLessThan(allowed);
  }, 1_800_000);
});
