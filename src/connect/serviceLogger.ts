/**
 * What an embedded worker says when its program gives no logger: what a service owner acts on,
 * one line each on standard error, as `lqb work` says it: the start line, failures and time-outs,
 * warnings, outages and their end, and why a worker stopped; not a line per job. Secrets are
 * blotted out and a long line is cut, as every line lqb writes.
 */
import type { WorkerLogger } from '../worker/index.js';
import { redactLine } from './redact.js';

/** The `info` events a service owner reads: a worker starting, stopping, a connection back, the app's shapes read. */
const SAID_AT_INFO = new Set(['starting', 'stopping', 'stopped', 'reconnected', 'shapes']);

export function serviceLogger(write: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): WorkerLogger {
  const say = (message: string | undefined) => {
    if (message) write(`laravel-queue-bridge: ${redactLine(message)}`);
  };
  return {
    debug: () => undefined,
    info: (fields, message) => {
      if (SAID_AT_INFO.has(String((fields as { event?: unknown }).event))) say(message);
    },
    warn: (_fields, message) => say(message),
    error: (_fields, message) => say(message),
  };
}
