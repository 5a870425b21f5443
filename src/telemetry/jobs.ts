/**
 * Spans and metrics for the jobs a worker runs, after OpenTelemetry's messaging conventions:
 * one CONSUMER span per reserved job (`process <queue>`), the handler running inside it so its
 * own spans are the job's children; `messaging.process.duration` and
 * `messaging.client.consumed.messages` per job, and the jobs in flight.
 *
 * A recorder of the worker's runs (telemetryRecorder): it hears the worker's job events (taken
 * up, what became of it, done, errors) and is never called from inside the worker.
 */
import type { Attributes, Counter, Histogram, ObservableUpDownCounter, ObservableCallback, Span, Tracer } from '@opentelemetry/api';
import { MESSAGING_SYSTEM, instrumentsOf, loadOpenTelemetry, type OpenTelemetryApi } from './otel.js';
import type { TelemetryOptions } from './options.js';
import { errorTypeOf, recordError } from './errors.js';
import { describeError } from '../worker/errors.js';
import type { JobRecord, RecorderFactory, WorkerEvent, WorkerRecorder } from '../worker/types.js';

/** What became of a job, as the worker's events name it. */
export type JobOutcome = 'processed' | 'deleted' | 'released' | 'failed' | 'given-back' | 'timed-out' | 'error';

/** The reserved job, as the worker's `processing` event gives it. */
export interface ReservedJobFacts {
  /** The envelope's displayName. */
  name: string;
  queue: string;
  id: string;
  uuid: string | undefined;
  attempts: number;
}

/** A job's span while it runs: told what the worker learns, ended once with the last outcome. */
export interface JobSpan {
  /** What became of the job (the last said wins: a job given back and then released is released). */
  outcome(outcome: JobOutcome, error?: unknown): void;
  /** Runs the handler with this span as the active one. */
  run<T>(handler: () => T): T;
  end(): void;
}

/** Outcomes that mean the attempt went wrong: the span's status is ERROR. */
const ERRORS: ReadonlySet<JobOutcome> = new Set(['failed', 'timed-out', 'error']);

export class WorkerTelemetry {
  private readonly duration: Histogram;
  private readonly consumed: Counter;
  private readonly errors: Counter;
  private readonly inFlight: ObservableUpDownCounter;
  private readonly observe: ObservableCallback;

  /**
   * The worker's telemetry, or undefined when OpenTelemetry is absent or turned off
   * (`telemetry: false`). `inFlight` reads the worker's jobs in hand, per queue.
   */
  static async open(
    options: TelemetryOptions | false | undefined,
    connection: string,
    inFlight: () => Record<string, number>,
  ): Promise<WorkerTelemetry | undefined> {
    if (options === false) return undefined;
    const api = await loadOpenTelemetry();
    return api ? new WorkerTelemetry(api, options ?? {}, connection, inFlight) : undefined;
  }

  private readonly tracer: Tracer;
  /** False when no SDK hears the meter: no metric is worth its cost then. */
  private readonly metered: boolean;
  /** Whether an SDK hears the tracer now (a global one may be registered after the worker starts). */
  private readonly traced: () => boolean;

  private readonly queues = new Map<string, QueueFacts>();

  private constructor(
    readonly api: OpenTelemetryApi,
    options: TelemetryOptions,
    private readonly connection: string,
    inFlight: () => Record<string, number>,
  ) {
    const { tracer, meter, metered, traced } = instrumentsOf(api, options);
    this.tracer = tracer;
    this.metered = metered;
    this.traced = traced;
    this.duration = meter.createHistogram('messaging.process.duration', {
      unit: 's',
      description: 'How long a job took, from its reservation to its end (done, released or failed).',
    });
    this.consumed = meter.createCounter('messaging.client.consumed.messages', {
      unit: '{message}',
      description: 'Jobs reserved by the worker.',
    });
    this.errors = meter.createCounter('lqb.worker.errors', {
      unit: '{error}',
      description: 'Trouble outside a handler: Redis unreachable, a failure that could not be recorded.',
    });
    this.inFlight = meter.createObservableUpDownCounter('lqb.worker.jobs.in_flight', {
      unit: '{job}',
      description: 'Jobs reserved and not yet finished.',
    });
    this.observe = (result) => {
      for (const [queue, count] of Object.entries(inFlight())) result.observe(count, this.queueOf(queue).attributes);
    };
    this.inFlight.addCallback(this.observe);
  }

  /** Whether a job's span or metrics would go anywhere: without an SDK, a job costs nothing here. */
  get heard(): boolean {
    return this.metered || this.traced();
  }

  /**
   * A span for a job reserved at `started` (performance.now()), about to run. A payload that
   * carries a W3C `traceparent` (OpenTelemetry's PHP instrumentation of Laravel writes one into
   * every payload it creates) makes it a child of the span that dispatched the job.
   */
  start(job: ReservedJobFacts, started: number, envelope?: Record<string, unknown>): JobSpan {
    const queue = this.queueOf(job.queue);
    const { propagation, ROOT_CONTEXT } = this.api;
    const parent = typeof envelope?.traceparent === 'string' ? propagation.extract(ROOT_CONTEXT, envelope) : undefined;
    const span = this.tracer.startSpan(
      queue.spanName,
      { kind: this.api.SpanKind.CONSUMER, startTime: performance.timeOrigin + started },
      parent,
    );
    // Attributes only for a span that keeps them: without an SDK (or unsampled) a job pays for none.
    if (span.isRecording()) {
      span.setAttributes({
        ...queue.attributes,
        'messaging.operation.type': 'process',
        'messaging.message.id': job.uuid ?? job.id,
        'laravel.job.id': job.id,
        ...(job.uuid !== undefined ? { 'laravel.job.uuid': job.uuid } : {}),
        'laravel.job.attempts': job.attempts,
        'laravel.job.name': job.name,
      });
    }
    this.consumed.add(1, queue.consumed);
    return new RecordedJob(this, span, started, queue, job.name);
  }

  /** Trouble outside a handler (the worker's `error` events). */
  error(queue: string | undefined): void {
    this.errors.add(1, queue === undefined ? { 'laravel.queue.connection': this.connection } : this.queueOf(queue).attributes);
  }

  /** Stops observing the worker's jobs in flight. */
  close(): void {
    this.inFlight.removeCallback(this.observe);
  }

  /** A finished job's duration, under attributes made once per queue, job and outcome. */
  recordDuration(queue: QueueFacts, name: string, outcome: JobOutcome, errorType: string | undefined, seconds: number): void {
    const key = `${name}\u0000${outcome}\u0000${errorType ?? ''}`;
    let attributes = queue.durations.get(key);
    if (!attributes) {
      attributes = {
        ...queue.attributes,
        'messaging.operation.name': 'process',
        'laravel.job.name': name,
        'laravel.job.outcome': outcome,
        ...(errorType !== undefined ? { 'error.type': errorType } : {}),
      };
      // Bounded: a queue of ever-new job names must not grow this for ever.
      if (queue.durations.size < 1000) queue.durations.set(key, attributes);
    }
    this.duration.record(seconds, attributes);
  }

  /** What every span and measurement of a queue shares, made once per queue. */
  private queueOf(name: string): QueueFacts {
    let queue = this.queues.get(name);
    if (!queue) {
      const attributes: Attributes = {
        'messaging.system': MESSAGING_SYSTEM,
        'messaging.destination.name': name,
        'laravel.queue.connection': this.connection,
      };
      queue = {
        spanName: `process ${name}`,
        attributes,
        consumed: { ...attributes, 'messaging.operation.name': 'process' },
        durations: new Map(),
      };
      if (this.queues.size < 1000) this.queues.set(name, queue);
    }
    return queue;
  }
}

/** A queue's span name and attributes. */
interface QueueFacts {
  spanName: string;
  attributes: Attributes;
  consumed: Attributes;
  durations: Map<string, Attributes>;
}

class RecordedJob implements JobSpan {
  private last: JobOutcome | undefined;
  private error: unknown;
  private ended = false;

  constructor(
    private readonly telemetry: WorkerTelemetry,
    private readonly span: Span,
    private readonly started: number,
    private readonly queue: QueueFacts,
    private readonly name: string,
  ) {}

  outcome(outcome: JobOutcome, error?: unknown): void {
    this.last = outcome;
    if (error !== undefined) this.error = error;
  }

  run<T>(handler: () => T): T {
    // A span nobody samples has no children to parent: the handler runs as it is.
    if (!this.span.isRecording()) return handler();
    const { context, trace } = this.telemetry.api;
    return context.with(trace.setSpan(context.active(), this.span), handler);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    const outcome = this.last ?? 'error';
    let errorType: string | undefined;
    if (this.span.isRecording()) {
      this.span.setAttribute('laravel.job.outcome', outcome);
      if (this.error !== undefined) errorType = recordError(this.span, this.error);
      if (ERRORS.has(outcome))
        this.span.setStatus({
          code: this.telemetry.api.SpanStatusCode.ERROR,
          message: this.error !== undefined ? describeError(this.error) : outcome,
        });
    } else if (this.error !== undefined) {
      errorType = errorTypeOf(this.error);
    }
    this.span.end();
    this.telemetry.recordDuration(this.queue, this.name, outcome, errorType, (performance.now() - this.started) / 1000);
  }
}

/**
 * OpenTelemetry as a recorder of a worker's runs, opened with the worker's `telemetry` option:
 * none when it is `false` or `@opentelemetry/api` is absent; a broken install is said as a
 * warning and costs the spans, never the jobs.
 */
export const telemetryRecorder: RecorderFactory = async ({ deps, connectionName, jobsInHand, warn }) => {
  const telemetry = await WorkerTelemetry.open(deps.telemetry, connectionName, jobsInHand).catch((error: unknown) => {
    warn(`running without OpenTelemetry: @opentelemetry/api did not load (${describeError(error)})`);
    return undefined;
  });
  return telemetry && new TelemetryRecorder(telemetry);
};

/** A span per job in hand, from its `processing` event to its end. */
class TelemetryRecorder implements WorkerRecorder {
  private readonly spans = new Map<JobRecord, JobSpan>();

  constructor(private readonly telemetry: WorkerTelemetry) {}

  processing(record: JobRecord, event: WorkerEvent): void {
    // With the API and no SDK (a library's usual state), no span is made: around() and end() find none.
    if (!this.telemetry.heard) return;
    const job = record.job;
    // The envelope, for a trace context the producer wrote into it: as read, else as reserved
    // (unless the queue could not read it either).
    const envelope = record.payload?.envelope ?? (job.unreadable() === undefined ? job.fields : undefined);
    const span = this.telemetry.start(
      { name: record.name, queue: job.queue, id: event.id ?? job.id, uuid: event.uuid, attempts: event.attempts ?? job.attempts() },
      record.startedAt,
      envelope,
    );
    this.spans.set(record, span);
  }

  outcome(record: JobRecord, event: WorkerEvent, cause?: unknown): void {
    this.spans.get(record)?.outcome(event.event as JobOutcome, cause);
  }

  finished(record: JobRecord): void {
    const span = this.spans.get(record);
    this.spans.delete(record);
    span?.end();
  }

  error(event: WorkerEvent): void {
    this.telemetry.error(event.queue);
  }

  around<T>(record: JobRecord, handler: () => T): T {
    const span = this.spans.get(record);
    return span ? span.run(handler) : handler();
  }

  close(): void {
    this.telemetry.close();
  }
}
