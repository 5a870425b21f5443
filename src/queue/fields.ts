import type { ReservedFields } from './contract.js';

/**
 * A reserved job's envelope fields read straight from its raw JSON, without decoding the command
 * (an empty object for a body that is not a JSON object): what a driver's job reports beside them
 * (the database's row id and attempts column, a test's attempt) is laid over these.
 */
export function rawFields(raw: string): ReservedFields {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as ReservedFields) : {};
}
