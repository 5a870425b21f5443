/**
 * Spans and metrics for dispatch, after OpenTelemetry's messaging conventions: one PRODUCER
 * span per job pushed (`send <queue>`), `messaging.client.sent.messages` and
 * `messaging.client.operation.duration`.
 *
 * The trace context is written into the payload only when asked (`propagate`): by default the
 * envelope goes out as Laravel writes it, byte for byte, and the job's uuid
 * (`messaging.message.id`) ties the producer's span to the consumer's.
 */
import type { Attributes, Counter, Histogram, Tracer } from '@opentelemetry/api';
import { MESSAGING_SYSTEM, instrumentsOf, loadOpenTelemetry, type OpenTelemetryApi } from './otel.js';
import type { TelemetryOptions } from './options.js';
import { recordError } from './errors.js';
import { describeError } from '../worker/errors.js';

/** What a dispatch made of a job: its name and delay, and what dispatch() answers. */
export interface SentJob<Answer extends { uuid: string | null; id: string | number | null; queue: string; duplicate?: boolean }> {
  name: string;
  /** Seconds before it may run (0: at once). */
  delay: number;
  dispatched: Answer;
}

export class DispatchTelemetry {
  private readonly tracer: Tracer;
  private readonly sent: Counter;
  private readonly duration: Histogram;
  /** False when no SDK hears the meter. */
  private readonly metered: boolean;
  /** Whether an SDK hears the tracer now (a global one may be registered after the first dispatch). */
  private readonly traced: () => boolean;

  /** Dispatch's telemetry, or undefined when OpenTelemetry is absent or turned off. */
  static async open(options: TelemetryOptions | false | undefined, connection: string): Promise<DispatchTelemetry | undefined> {
    if (options === false) return undefined;
    const api = await loadOpenTelemetry();
    return api ? new DispatchTelemetry(api, options ?? {}, connection) : undefined;
  }

  private readonly propagate: boolean;

  private constructor(
    private readonly api: OpenTelemetryApi,
    options: TelemetryOptions,
    private readonly connection: string,
  ) {
    this.propagate = options.propagate === true;
    const { tracer, meter, metered, traced } = instrumentsOf(api, options);
    this.tracer = tracer;
    this.metered = metered;
    this.traced = traced;
    this.sent = meter.createCounter('messaging.client.sent.messages', { unit: '{message}', description: 'Jobs pushed by dispatch.' });
    this.duration = meter.createHistogram('messaging.client.operation.duration', { unit: 's', description: 'How long a push took.' });
  }

  /**
   * Whether a dispatch's span or metrics would go anywhere: without an SDK (the API alone, as an
   * install has it by default) they would not, and a dispatch skips send() and costs nothing here.
   * Nothing is lost: the API's span is then one that records nothing and injects no context.
   */
  get heard(): boolean {
    return this.metered || this.traced();
  }

  /**
   * Runs a dispatch within a span. With `propagate`, `dispatch` is given the span's W3C trace
   * context (`traceparent`, `tracestate`) for the envelope, as OpenTelemetry's PHP instrumentation
   * of Laravel writes it; else nothing, and the payload is what Laravel writes.
   */
  async send<Answer extends { uuid: string | null; id: string | number | null; queue: string; duplicate?: boolean }>(
    dispatch: (extra: Record<string, string> | undefined) => Promise<SentJob<Answer>>,
  ): Promise<Answer> {
    const { context, trace, propagation, SpanKind, SpanStatusCode } = this.api;
    const span = this.tracer.startSpan('send', {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.system': MESSAGING_SYSTEM, 'messaging.operation.type': 'send' },
    });
    const active = trace.setSpan(context.active(), span);
    let extra: Record<string, string> | undefined;
    if (this.propagate && span.isRecording()) {
      extra = {};
      propagation.inject(active, extra);
    }
    const started = performance.now();
    const measured: Attributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.operation.name': 'send',
      'laravel.queue.connection': this.connection,
    };
    try {
      const sent = await context.with(active, () => dispatch(extra && Object.keys(extra).length > 0 ? extra : undefined));
      const { dispatched } = sent;
      span.updateName(`send ${dispatched.queue}`);
      measured['messaging.destination.name'] = dispatched.queue;
      measured['laravel.job.name'] = sent.name;
      span.setAttributes({
        ...measured,
        ...(dispatched.id !== null ? { 'messaging.message.id': dispatched.uuid ?? dispatched.id, 'laravel.job.id': dispatched.id } : {}),
        ...(dispatched.uuid !== null ? { 'laravel.job.uuid': dispatched.uuid } : {}),
        ...(sent.delay > 0 ? { 'laravel.job.delay': sent.delay } : {}),
        // A ShouldBeUnique job whose lock is held is not pushed, as Laravel's dispatch drops it.
        ...(dispatched.duplicate ? { 'laravel.job.duplicate': true } : {}),
      });
      if (!dispatched.duplicate) this.sent.add(1, measured);
      return dispatched;
    } catch (error) {
      measured['error.type'] = recordError(span, error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: describeError(error) });
      throw error;
    } finally {
      span.end();
      this.duration.record((performance.now() - started) / 1000, measured);
    }
  }
}
