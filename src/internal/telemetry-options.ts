/**
 * How telemetry is configured, with no import of its own: the worker's and connect's public
 * options name it, and neither the worker nor a project without `@opentelemetry/api` should
 * depend on src/telemetry/ for a type.
 */

/**
 * Where spans and metrics go: providers of the application's OpenTelemetry SDK, else the global
 * ones it registered. Typed by shape, so that a project without `@opentelemetry/api` compiles.
 */
export interface TelemetryOptions {
  /** A TracerProvider (else `trace.getTracerProvider()`, the global one). */
  tracerProvider?: { getTracer(name: string, version?: string): unknown };
  /** A MeterProvider (else `metrics.getMeterProvider()`, the global one). */
  meterProvider?: { getMeter(name: string, version?: string): unknown };
  /**
   * Write each dispatch's W3C trace context into its payload (`traceparent`, `tracestate`, before
   * `id`), as OpenTelemetry's PHP instrumentation of Laravel does, so the workers' spans (Node's,
   * or PHP's so instrumented) are the dispatch's children. Off by default: the payload is then
   * exactly what Laravel writes. A worker reads a trace context from any payload that has one.
   */
  propagate?: boolean;
}
