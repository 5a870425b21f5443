/**
 * Spans and metrics for dispatch, after OpenTelemetry's messaging conventions: one PRODUCER
 * span per job pushed (`send <queue>`), `messaging.client.sent.messages` and
 * `messaging.client.operation.duration`.
 *
 * The trace context is not written into the payload: Laravel's envelope goes out as Laravel
 * writes it, byte for byte. The job's uuid (`messaging.message.id`) ties the producer's span to
 * the consumer's.
 */
import type { Attributes, Counter, Histogram, Tracer } from '@opentelemetry/api';
import { packageVersion } from '../internal/root.js';
import { MESSAGING_SYSTEM, instrumentsOf, loadOpenTelemetry, type OpenTelemetryApi } from './otel.js';
import type { TelemetryOptions } from './options.js';

/** The job being pushed. */
export interface SentJobFacts {
  name: string;
  queue: string;
  id: string;
  uuid: string | null;
  /** Seconds before it may run, if delayed. */
  delay?: number;
}

export class DispatchTelemetry {
  private readonly tracer: Tracer;
  private readonly sent: Counter;
  private readonly duration: Histogram;

  /** Dispatch's telemetry, or undefined when OpenTelemetry is absent or turned off. */
  static async open(options: TelemetryOptions | false | undefined, connection: string): Promise<DispatchTelemetry | undefined> {
    if (options === false) return undefined;
    const api = await loadOpenTelemetry();
    return api ? new DispatchTelemetry(api, options ?? {}, connection) : undefined;
  }

  private constructor(
    private readonly api: OpenTelemetryApi,
    options: TelemetryOptions,
    private readonly connection: string,
  ) {
    const { tracer, meter } = instrumentsOf(api, options, packageVersion());
    this.tracer = tracer;
    this.sent = meter.createCounter('messaging.client.sent.messages', { unit: '{message}', description: 'Jobs pushed by dispatch.' });
    this.duration = meter.createHistogram('messaging.client.operation.duration', { unit: 's', description: 'How long a push took.' });
  }

  /** Pushes within a span; the span and the metrics say whether Redis took the job. */
  async send<T>(job: SentJobFacts, push: () => Promise<T>): Promise<T> {
    const { context, trace, SpanKind, SpanStatusCode } = this.api;
    const attributes: Attributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.destination.name': job.queue,
      'messaging.operation.name': 'send',
      'laravel.queue.connection': this.connection,
    };
    const span = this.tracer.startSpan(`send ${job.queue}`, {
      kind: SpanKind.PRODUCER,
      attributes: {
        ...attributes,
        'messaging.operation.type': 'send',
        'messaging.message.id': job.uuid ?? job.id,
        'laravel.job.id': job.id,
        ...(job.uuid !== null ? { 'laravel.job.uuid': job.uuid } : {}),
        'laravel.job.name': job.name,
        ...(job.delay ? { 'laravel.job.delay': job.delay } : {}),
      },
    });
    const started = performance.now();
    let errorType: string | undefined;
    try {
      return await context.with(trace.setSpan(context.active(), span), push);
    } catch (error) {
      errorType = error instanceof Error ? error.name : typeof error;
      span.setAttribute('error.type', errorType);
      if (error instanceof Error) span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
      const measured = { ...attributes, 'laravel.job.name': job.name, ...(errorType !== undefined ? { 'error.type': errorType } : {}) };
      this.duration.record((performance.now() - started) / 1000, measured);
      if (errorType === undefined) this.sent.add(1, measured);
    }
  }
}
