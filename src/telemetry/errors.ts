/**
 * A thrown value on a span, whatever it is (an Error, a string, a Proxy whose traps throw): its
 * `error.type` and an `exception` event. Its text is describeError's, as the worker's events say it.
 */
import type { Span } from '@opentelemetry/api';
import { describeError } from '../worker/errors.js';

/** Sets the span's `error.type` and records the exception; returns the type, for the metrics. */
export function recordError(span: Span, error: unknown): string {
  const type = errorTypeOf(error);
  span.setAttribute('error.type', type);
  span.recordException(asException(error, type));
  return type;
}

/** The error's class name, as `error.type` wants it. */
export function errorTypeOf(error: unknown): string {
  try {
    // The JS class (what Node code catches), not `name`, which some errors set to PHP's exception class.
    if (error instanceof Error) return error.constructor.name || error.name || 'Error';
  } catch {
    // A getter that throws: the kind is still an Error.
  }
  return error === null ? 'null' : typeof error;
}

/** What recordException takes, made safely from any thrown value. */
function asException(error: unknown, type: string): { name: string; message: string; stack?: string } | string {
  const message = describeError(error);
  let stack: string | undefined;
  try {
    if (!(error instanceof Error)) return message;
    stack = typeof error.stack === 'string' ? error.stack : undefined;
  } catch {
    // A Proxy whose traps throw, a stack getter that throws: the message is what there is.
    return message;
  }
  return { name: type, message, ...(stack !== undefined ? { stack } : {}) };
}
