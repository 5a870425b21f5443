/**
 * How telemetry is configured. Apart from the rest of src/telemetry so that the public types
 * (connect's and the worker's options) never name `@opentelemetry/api`: a project without it
 * still compiles against them. Declared in src/internal/, where the worker reads it too.
 */
export type { TelemetryOptions } from '../internal/telemetry-options.js';
