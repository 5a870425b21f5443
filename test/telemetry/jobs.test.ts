/**
 * OpenTelemetry spans and metrics of the worker (consumer) and dispatch (producer), read back
 * from OpenTelemetry's own SDK (in-memory exporter and metric reader) on real Redis: Node
 * dispatches, the library's worker consumes.
 */
import { SpanKind, SpanStatusCode, context, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/connect/index.js';
import { defineHandlers } from '../../src/worker/handlers.js';
import { REDIS_URL, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const QUEUE = 'traced';
const JOB = 'App\\Jobs\\Traced';
let prefix: string;
let queue: LaravelQueue | undefined;
let spans: InMemorySpanExporter;
let tracerProvider: BasicTracerProvider;
let reader: PeriodicExportingMetricReader;
let meterProvider: MeterProvider;
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  // What an application's SDK set-up does: without a context manager no span has a parent.
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

beforeEach(() => {
  prefix = uniquePrefix('otel');
  spans = new InMemorySpanExporter();
  tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  });
  meterProvider = new MeterProvider({ readers: [reader] });
});

afterEach(async () => {
  await queue?.close();
  queue = undefined;
  trace.disable();
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

/** Each finished span of a kind of operation, by the job's `n` property order of dispatch. */
const named = (name: string) => spans.getFinishedSpans().filter((span) => span.name === name);
const attributesOf = (span: ReadableSpan | undefined): Attributes => span?.attributes ?? {};

async function metrics(): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect();
  const found = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics) for (const metric of scope.metrics) found.set(metric.descriptor.name, metric);
  return found;
}

describe('OpenTelemetry, with the providers given to connect()', () => {
  it('a PRODUCER span per dispatch and a CONSUMER span per attempt, tied by the uuid; handler spans are the job span’s children', async () => {
    queue = await connect({ redis: REDIS_URL, prefix, defaultQueue: QUEUE, telemetry: { tracerProvider, meterProvider } });
    const ok = await queue.dispatch(JOB, { n: 1 });
    const failing = await queue.dispatch(JOB, { n: 2 }, { tries: 1 });
    const retried = await queue.dispatch(JOB, { n: 3 }, { tries: 2 });
    const appTracer = tracerProvider.getTracer('the-app');
    const worker = queue.worker(
      defineHandlers({
        [JOB]: async (job) => {
          const n = job.command.n;
          await appTracer.startActiveSpan(`work ${String(n)}`, async (span) => {
            await new Promise((r) => setTimeout(r, 5));
            span.end();
          });
          if (n === 2) throw new RangeError('n is two');
          if (n === 3 && job.attempts === 1) await job.release(0);
        },
      }),
      { stopWhenEmpty: true, sleep: 0, failer: false, concurrency: 1 },
    );
    const failedEvents: string[] = [];
    worker.on('failed', (event) => failedEvents.push(event.uuid ?? ''));
    expect(await worker.run(), 'the worker did not stop for an empty queue').toMatchObject({ reason: 'empty' });
    expect(failedEvents, 'job 2 did not fail').toEqual([failing.uuid]);

    const sent = named(`send ${QUEUE}`);
    expect(
      sent.map((span) => span.attributes['messaging.message.id']),
      'one send span per dispatch, its message id the uuid',
    ).toEqual([ok.uuid, failing.uuid, retried.uuid]);
    expect(sent[0]!.kind, 'send span kind').toBe(SpanKind.PRODUCER);
    expect(attributesOf(sent[0]), 'send span attributes').toMatchObject({
      'messaging.system': 'laravel',
      'messaging.destination.name': QUEUE,
      'messaging.operation.type': 'send',
      'laravel.job.name': JOB,
      'laravel.job.id': ok.id,
    });

    const processed = named(`process ${QUEUE}`);
    const byAttempt = processed.map((span) => [
      span.attributes['messaging.message.id'],
      span.attributes['laravel.job.attempts'],
      span.attributes['laravel.job.outcome'],
    ]);
    expect(byAttempt, 'one process span per attempt: id, attempts, outcome').toEqual([
      [ok.uuid, 1, 'processed'],
      [failing.uuid, 1, 'failed'],
      [retried.uuid, 1, 'released'],
      [retried.uuid, 2, 'processed'],
    ]);
    expect(processed[0]!.kind, 'process span kind').toBe(SpanKind.CONSUMER);
    expect(attributesOf(processed[0]), 'process span attributes').toMatchObject({
      'messaging.system': 'laravel',
      'messaging.destination.name': QUEUE,
      'messaging.operation.type': 'process',
      'laravel.job.name': JOB,
      'laravel.queue.connection': 'redis',
    });

    const failedSpan = processed[1]!;
    expect(failedSpan.status, 'the failed job’s span status').toMatchObject({ code: SpanStatusCode.ERROR, message: 'n is two' });
    expect(failedSpan.attributes['error.type'], 'the failed job’s error.type').toBe('RangeError');
    expect(
      failedSpan.events.map((event) => [event.name, event.attributes?.['exception.message']]),
      'the failed job’s exception event',
    ).toEqual([['exception', 'n is two']]);
    expect(processed[0]!.status.code, 'a processed job’s span status').toBe(SpanStatusCode.UNSET);
    expect(processed[2]!.status.code, 'a job released by its handler (no exception) is not an error').toBe(SpanStatusCode.UNSET);

    for (const n of [1, 2, 3]) {
      const child = named(`work ${n}`)[0];
      const parent = processed.find((span) => span.spanContext().spanId === child?.parentSpanContext?.spanId);
      expect(parent?.attributes['laravel.job.id'], `the handler’s span for job ${n} is not a child of its job’s span`).toBe(
        [ok, failing, retried][n - 1]!.id,
      );
    }

    const measured = await metrics();
    const duration = measured.get('messaging.process.duration');
    const counts = Object.fromEntries(
      (duration?.dataPoints ?? []).map((point) => [
        String(point.attributes['laravel.job.outcome']),
        (point.value as { count: number }).count,
      ]),
    );
    expect(counts, 'messaging.process.duration counts per outcome').toEqual({ processed: 2, failed: 1, released: 1 });
    expect(duration?.descriptor.unit, 'duration unit').toBe('s');
    const total = (name: string) => (measured.get(name)?.dataPoints ?? []).reduce((sum, point) => sum + (point.value as number), 0);
    expect(total('messaging.client.consumed.messages'), 'jobs consumed').toBe(4);
    expect(total('messaging.client.sent.messages'), 'jobs sent').toBe(3);
    expect(measured.has('lqb.worker.jobs.in_flight'), 'no in-flight metric').toBe(false); // observed only while a worker runs
  });

  it('the jobs in flight are observed while the worker runs', async () => {
    queue = await connect({ redis: REDIS_URL, prefix, defaultQueue: QUEUE, telemetry: { tracerProvider, meterProvider } });
    for (let n = 0; n < 3; n++) await queue.dispatch(JOB, { n });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const worker = queue.worker(
      defineHandlers({
        [JOB]: async () => {
          started++;
          await held;
        },
      }),
      { stopWhenEmpty: true, sleep: 0, failer: false, concurrency: 3 },
    );
    const running = worker.run();
    while (started < 3) await new Promise((r) => setTimeout(r, 10));
    const inFlight = (await metrics()).get('lqb.worker.jobs.in_flight');
    expect(
      inFlight?.dataPoints.map((point) => [point.attributes['messaging.destination.name'], point.value]),
      'jobs in flight per queue',
    ).toEqual([[QUEUE, 3]]);
    release();
    await running;
  });

  it('a job that cannot be read has a span too: failed, with the reason', async () => {
    queue = await connect({ redis: REDIS_URL, prefix, defaultQueue: QUEUE, telemetry: { tracerProvider, meterProvider } });
    await queue.connection.pushRaw(
      '{"uuid":"u-1","displayName":"Bad","job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","data":{"commandName":"Bad","command":"O:3:\\"Bad"},"id":"bad-1","attempts":0}',
      QUEUE,
    );
    const worker = queue.worker({}, { stopWhenEmpty: true, sleep: 0, failer: false, share: false });
    await worker.run();
    const [span] = named(`process ${QUEUE}`);
    expect(attributesOf(span), 'the unreadable job’s span').toMatchObject({
      'laravel.job.id': 'bad-1',
      'laravel.job.outcome': 'failed',
      'error.type': 'UndecodableJobError',
    });
    expect(span?.status.code, 'the unreadable job’s span status').toBe(SpanStatusCode.ERROR);
  });
});

describe('OpenTelemetry, through the global providers', () => {
  it('spans go to the global tracer provider by default, and nowhere with telemetry: false', async () => {
    trace.setGlobalTracerProvider(tracerProvider);
    queue = await connect({ redis: REDIS_URL, prefix, defaultQueue: QUEUE });
    await queue.dispatch(JOB, { n: 1 });
    const handlers = defineHandlers({ [JOB]: async () => undefined });
    await queue.worker(handlers, { stopWhenEmpty: true, sleep: 0, failer: false }).run();
    expect(
      spans.getFinishedSpans().map((span) => span.name),
      'the global provider heard nothing',
    ).toEqual([`send ${QUEUE}`, `process ${QUEUE}`]);
    spans.reset();
    await queue.dispatch(JOB, { n: 2 });
    await queue.worker(handlers, { stopWhenEmpty: true, sleep: 0, failer: false, telemetry: false }).run();
    expect(
      spans.getFinishedSpans().map((span) => span.name),
      'telemetry: false on the worker still made a span',
    ).toEqual([`send ${QUEUE}`]);
  });

  it('with no SDK behind the API a job makes no span; a global provider registered while the worker runs hears the jobs after it', async () => {
    queue = await connect({ redis: REDIS_URL, prefix, defaultQueue: QUEUE });
    await queue.dispatch(JOB, { n: 1 });
    await queue.dispatch(JOB, { n: 2 });
    const ran: number[] = [];
    const handlers = defineHandlers({
      [JOB]: (job) => {
        ran.push(Number(job.command.n));
        // The application's SDK starts late: after the worker took up its first job.
        if (job.command.n === 1) trace.setGlobalTracerProvider(tracerProvider);
      },
    });
    await queue.worker(handlers, { stopWhenEmpty: true, sleep: 0, failer: false, concurrency: 1 }).run();
    expect(ran, 'both jobs ran, in order').toEqual([1, 2]);
    const processed = named(`process ${QUEUE}`);
    expect(processed.length, 'spans: none for the job taken up with no SDK, one for the job after the provider was registered').toBe(1);
    expect(attributesOf(processed[0])['laravel.job.attempts'], 'the span is the second job’s first attempt').toBe(1);
  });
});
