/**
 * OpenTelemetry, when the application has it: `@opentelemetry/api` is an optional peer
 * dependency, loaded on first use and never required. Without it (or with `telemetry: false`)
 * the worker and dispatch make no spans and record no metrics, at no cost.
 *
 * Only the API is loaded: spans and metrics go wherever the application's SDK sends them (its
 * global providers, or the ones given here), as with any instrumented library.
 */
import type * as Api from '@opentelemetry/api';
import type { TelemetryOptions } from './options.js';
import { packageVersion } from '../internal/version.js';

export type OpenTelemetryApi = typeof Api;

/** The name spans and metrics are recorded under (the instrumentation scope). */
export const INSTRUMENTATION_SCOPE = 'laravel-queue-bridge';

let loading: Promise<OpenTelemetryApi | undefined> | undefined;

/** `@opentelemetry/api`, or undefined when the application does not have it. Loaded once. */
export function loadOpenTelemetry(): Promise<OpenTelemetryApi | undefined> {
  loading ??= import('@opentelemetry/api').then(
    // A CommonJS package: Node gives its names on the namespace, and all of them on `default`.
    (module) => {
      const api = module as unknown as OpenTelemetryApi & { default?: OpenTelemetryApi };
      return api.SpanKind !== undefined ? api : (api.default ?? api);
    },
    (error: unknown) => {
      if (isMissingModule(error)) return undefined;
      throw error;
    },
  );
  return loading;
}

function isMissingModule(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/**
 * A tracer and a meter, from the given providers or the global ones, named for this package and
 * version; and whether anything hears them: `metered` is false for the API's no-op meter (no SDK
 * registered a MeterProvider, and one registered later is not seen by a meter made now);
 * `traced()` is false while the global tracer provider is the API's proxy with no SDK behind it
 * yet (asked again each time: an SDK may register the provider later).
 */
export function instrumentsOf(
  api: OpenTelemetryApi,
  options: TelemetryOptions,
): { tracer: Api.Tracer; meter: Api.Meter; metered: boolean; traced: () => boolean } {
  const version = packageVersion();
  const tracerProvider = (options.tracerProvider ?? api.trace.getTracerProvider()) as Api.TracerProvider;
  const meterProvider = (options.meterProvider ?? api.metrics.getMeterProvider()) as Api.MeterProvider;
  const meter = meterProvider.getMeter(INSTRUMENTATION_SCOPE, version);
  return {
    tracer: tracerProvider.getTracer(INSTRUMENTATION_SCOPE, version),
    meter,
    metered: !isNoopMeter(api, meter),
    traced: tracedBy(api, tracerProvider),
  };
}

/** The API's no-op meter (no SDK registered a MeterProvider); an API too old to tell counts as heard. */
function isNoopMeter(api: OpenTelemetryApi, meter: Api.Meter): boolean {
  const noop = typeof api.createNoopMeter === 'function' ? api.createNoopMeter() : undefined;
  return noop !== undefined && meter.constructor === noop.constructor;
}

/** Whether spans of this provider go anywhere: false while it is the API's proxy and no SDK stands behind it. */
function tracedBy(api: OpenTelemetryApi, provider: Api.TracerProvider): () => boolean {
  if (!(provider instanceof api.ProxyTracerProvider)) return () => true;
  // A proxy made here has no delegate: it hands out the API's no-op provider, the one to compare with.
  const noop = new api.ProxyTracerProvider().getDelegate();
  return () => provider.getDelegate() !== noop;
}

/** Attributes every span and measurement carries, after OpenTelemetry's messaging conventions. */
export const MESSAGING_SYSTEM = 'laravel';
