/** OpenTelemetry spans and metrics for the worker and dispatch, when `@opentelemetry/api` is present. */
export { loadOpenTelemetry, INSTRUMENTATION_SCOPE, MESSAGING_SYSTEM } from './otel.js';
export type { TelemetryOptions } from './options.js';
export { WorkerTelemetry, telemetryRecorder, type JobOutcome, type JobSpan, type ReservedJobFacts } from './jobs.js';
