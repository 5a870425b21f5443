/**
 * The W3C trace context in the payload, both ways with real Laravel 8.83:
 *   - Laravel produces (laravel-dispatch.php) a payload whose createPayloadUsing hook adds a
 *     `traceparent`, as OpenTelemetry's PHP instrumentation of Laravel does; the Node worker
 *     consumes it, its span a child of that context.
 *   - Node produces with `propagate: true`; Laravel's own worker (laravel-worker.php) runs the
 *     payload, and a Node worker's span is the dispatch span's child.
 */
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect } from '../../src/connect/index.js';
import { defineHandlers } from '../../src/worker/handlers.js';
import { php, scratchPerTest } from '../helpers/processes.js';
import { REDIS_URL } from '../helpers/redis.js';

const QUEUE = 'traced';
const JOB = 'App\\Jobs\\Bridge\\RecordJob';
const current = scratchPerTest('otel-w3c', QUEUE);
let spans: InMemorySpanExporter;
let tracerProvider: BasicTracerProvider;

beforeAll(() => {
  // What OpenTelemetry's Node SDK registers by default.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  propagation.disable();
  context.disable();
});
beforeEach(() => {
  spans = new InMemorySpanExporter();
  tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
});

const open = (propagate: boolean) =>
  connect({
    redis: REDIS_URL,
    prefix: current.prefix,
    defaultQueue: QUEUE,
    failedDb: `sqlite://${current.s.dir}/failed.sqlite`,
    telemetry: { tracerProvider, propagate },
  });

describe('the trace context in the payload', () => {
  it('Laravel → Node: a payload carrying a traceparent makes the job’s span its child', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parentId = 'b7ad6b7169203331';
    const pushed = await php(
      'laravel-dispatch.php',
      ['record', JSON.stringify({ n: 1, queue: QUEUE, payload: { traceparent: `00-${traceId}-${parentId}-01` } })],
      current.s.env,
    );
    expect(pushed.status, `laravel-dispatch.php failed: ${pushed.stderr}`).toBe(0);
    const queue = await open(false);
    try {
      await queue.worker(defineHandlers({ [JOB]: async () => undefined }), { stopWhenEmpty: true, sleep: 0, failer: false }).run();
    } finally {
      await queue.close();
    }
    const [span] = spans.getFinishedSpans().filter((s) => s.name === `process ${QUEUE}`);
    expect(span?.spanContext().traceId, 'the job’s span is not in the producer’s trace').toBe(traceId);
    expect(span?.parentSpanContext?.spanId, 'the job’s span is not the producer span’s child').toBe(parentId);
  });

  it('Node → Laravel and Node: with propagate, the payload carries the dispatch span’s traceparent before its id; Laravel’s worker runs it', async () => {
    const queue = await open(true);
    try {
      const sent = await queue.dispatch(JOB, { n: 7, label: 'traced', ratio: 0.5, items: [], flag: true });
      const found = await queue.find(sent.uuid!);
      const [send] = spans.getFinishedSpans().filter((s) => s.name === `send ${QUEUE}`);
      const { traceId, spanId } = send!.spanContext();
      expect(found?.payload, 'the payload has no traceparent of the send span, before "id"').toContain(
        `"traceparent":"00-${traceId}-${spanId}-01","id":"${sent.id}"`,
      );
      const ran = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], current.s.env);
      expect(ran.status, `Laravel's worker failed: ${ran.stderr}`).toBe(0);
      expect(
        current.s.phpRuns().map((run) => [run.uuid, run.props.label]),
        'Laravel did not run the traced job',
      ).toEqual([[sent.uuid, 'traced']]);

      spans.reset();
      const again = await queue.dispatch(JOB, { n: 8 });
      await queue.worker(defineHandlers({ [JOB]: async () => undefined }), { stopWhenEmpty: true, sleep: 0, failer: false }).run();
      const finished = spans.getFinishedSpans();
      const sendAgain = finished.find((s) => s.name === `send ${QUEUE}`)!;
      const processed = finished.find((s) => s.name === `process ${QUEUE}`);
      expect(processed?.attributes['messaging.message.id'], 'not the job dispatched').toBe(again.uuid);
      expect(processed?.spanContext().traceId, 'the Node worker’s span is not in the dispatch’s trace').toBe(
        sendAgain.spanContext().traceId,
      );
      expect(processed?.parentSpanContext?.spanId, 'the Node worker’s span is not the dispatch span’s child').toBe(
        sendAgain.spanContext().spanId,
      );
    } finally {
      await queue.close();
    }
  });

  it('without propagate the payload is what Laravel writes: no traceparent', async () => {
    const queue = await open(false);
    try {
      const sent = await queue.dispatch(JOB, { n: 9 });
      expect((await queue.find(sent.uuid!))?.payload, 'a traceparent was written without propagate').not.toContain('traceparent');
      expect(
        spans.getFinishedSpans().map((s) => s.name),
        'no send span',
      ).toEqual([`send ${QUEUE}`]);
    } finally {
      await queue.close();
    }
  });
});
