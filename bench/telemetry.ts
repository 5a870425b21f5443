/**
 * What OpenTelemetry costs the worker, side by side in one run on the same Redis: no-op jobs of
 * about 1 KB, one process, concurrency 32, each configuration in turn for ROUNDS rounds:
 *   - `telemetry: false`;
 *   - `@opentelemetry/api` present and no SDK registered (what an install without one pays);
 *   - an SDK recording every span (BatchSpanProcessor to an exporter that drops them) and the
 *     metrics (a MeterProvider whose reader is never collected).
 *
 *   npx tsx bench/telemetry.ts          JOBS=20000 ROUNDS=5 for other sizes
 */
import { randomBytes } from 'node:crypto';
import { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { buildPayload } from '../src/laravel/index.js';
import { bridgeRecordJob } from '../src/cli/demo.js';
import { RedisQueue, connectRedis } from '../src/redis/index.js';
import { Worker } from '../src/worker/index.js';
import type { TelemetryOptions } from '../src/telemetry/index.js';
import { median } from './stats.js';

const JOBS = Number(process.env.JOBS ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const QUEUE = 'bench';
const prefix = `lqb-bench-otel-${randomBytes(3).toString('hex')}:`;
const client = connectRedis({ prefix });
const queue = new RedisQueue(client, { defaultQueue: QUEUE });
const template = buildPayload(
  bridgeRecordJob({ n: 1, label: 'bench', ratio: 0.5, items: { pad: Array.from({ length: 20 }, () => 'padding-to-a-kilobyte') } }),
).raw;

const dropping: SpanExporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => undefined };
const recording: TelemetryOptions = {
  tracerProvider: new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(dropping, { maxQueueSize: 100_000, maxExportBatchSize: 5_000 })],
  }),
  meterProvider: new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 3_600_000,
      }),
    ],
  }),
};

const configurations: [string, TelemetryOptions | false | undefined][] = [
  ['telemetry: false', false],
  ['API present, no SDK', undefined],
  ['SDK recording spans and metrics', recording],
];

async function run(telemetry: TelemetryOptions | false | undefined): Promise<number> {
  await queue.clear();
  for (let i = 0; i < JOBS; i += 1000) {
    await queue.bulkRaw(
      Array.from({ length: Math.min(1000, JOBS - i) }, () =>
        template.replace(/"id":"[A-Za-z0-9]{32}"/, `"id":"${randomBytes(16).toString('hex')}"`),
      ),
    );
  }
  const worker = new Worker(
    queue,
    { 'App\\Jobs\\Bridge\\RecordJob': () => undefined },
    { queues: [QUEUE], stopWhenEmpty: true, sleep: 0, concurrency: 32, timeout: 0, memory: 0 },
    { failer: false, ...(telemetry !== undefined ? { telemetry } : {}) },
  );
  const start = performance.now();
  await worker.run();
  return JOBS / ((performance.now() - start) / 1000);
}

const results = new Map<string, number[]>(configurations.map(([name]) => [name, []]));
await run(false); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  // Each round in another order, so no configuration always follows the same one.
  const order = round % 2 === 0 ? configurations : [...configurations].reverse();
  for (const [name, telemetry] of order) results.get(name)!.push(await run(telemetry));
}
const base = median(results.get('telemetry: false')!);
console.log(`\n${JOBS} no-op jobs of ${template.length} B, concurrency 32, one process; median of ${ROUNDS} rounds\n`);
console.log('| configuration | jobs/s (median) | runs | vs telemetry: false |');
console.log('|---|---:|---|---:|');
for (const [name, values] of results) {
  console.log(
    `| ${name} | ${Math.round(median(values)).toLocaleString('en')} | ${values.map((v) => Math.round(v / 100) / 10 + 'k').join(', ')} | ${(median(values) / base).toFixed(2)}× |`,
  );
}
await queue.clear();
client.disconnect();
await (recording.meterProvider as MeterProvider).shutdown();
