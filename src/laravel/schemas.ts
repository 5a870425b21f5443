/**
 * JSON Schemas (draft 2020-12) for the job envelope Laravel's RedisQueue writes, one per version
 * profile, plus the keys Horizon adds. The schemas live in `schemas/` at the package root so that
 * other tools can use them too; this module loads and compiles them and reports problems as JSON
 * pointers into the payload. The package carries them built in (src/internal/schemas.ts).
 */
// ajv is loaded when a schema is first used, not at import: `laravel-queue-bridge/laravel` stays light.
import type { Ajv2020, ErrorObject, SchemaObject, ValidateFunction } from 'ajv/dist/2020.js';

import { loadAjv2020 } from '../internal/ajv.js';
import { readSchemaFile } from '../internal/schemas.js';

import { LARAVEL_PROFILES, type LaravelProfile } from './payload.js';

/** One reason a payload does not match: where (a JSON pointer, '' for the whole payload) and why. */
export interface PayloadIssue {
  path: string;
  message: string;
}

export interface PayloadValidationOptions {
  /** Also require the keys Horizon adds (type, tags, pushedAt; silenced when present). */
  horizon?: boolean;
}

export class PayloadSchemaError extends Error {
  readonly issues: PayloadIssue[];

  constructor(profile: LaravelProfile, issues: PayloadIssue[]) {
    const first = issues[0];
    const where = first ? (first.path === '' ? '(root)' : first.path) : '(root)';
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(`Not a valid Laravel ${profile} job payload: ${where} ${first?.message ?? 'is invalid'}${more}`);
    this.name = 'PayloadSchemaError';
    this.issues = issues;
  }
}

const loadSchema = (file: string): SchemaObject => readSchemaFile(file);

let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

/** Compiles a schema file on first use; the Ajv instance holds definitions.json for the `$ref`s. */
function validator(file: string): ValidateFunction {
  let validate = validators.get(file);
  if (validate) return validate;
  if (!ajv) {
    // allErrors: report every problem, not just the first. allowUnionTypes: the schemas say
    // `"type": ["integer", "null"]` on purpose (one error per field instead of an anyOf's three).
    // strictRequired is off because `then` requires keys that the parent schema describes.
    ajv = new (loadAjv2020())({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    ajv.addSchema(loadSchema('definitions.json'));
  }
  validate = ajv.compile(loadSchema(file));
  validators.set(file, validate);
  return validate;
}

const profileFile = (profile: LaravelProfile) => `payload-${profile}.json`;

function checkProfile(profile: LaravelProfile): void {
  if (!(LARAVEL_PROFILES as readonly string[]).includes(profile)) {
    throw new RangeError(`Unknown Laravel profile ${JSON.stringify(profile)}; expected one of ${LARAVEL_PROFILES.join(', ')}`);
  }
}

/** The JSON Schema of a profile, as read from `schemas/payload-<profile>.json`. */
export function schemaFor(profile: LaravelProfile): SchemaObject {
  checkProfile(profile);
  return loadSchema(profileFile(profile));
}

/** The JSON Schema of the keys Horizon adds, as read from `schemas/horizon.json`. */
export function horizonSchema(): SchemaObject {
  return loadSchema('horizon.json');
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** ajv's errors as issues: a missing key is reported at the key's own path, not its parent's. */
function toIssues(errors: ErrorObject[] | null | undefined): PayloadIssue[] {
  const issues: PayloadIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors ?? []) {
    // "must match \"then\" schema" only repeats the errors found inside `then`.
    if (error.keyword === 'if') continue;
    let { instancePath: path, message = 'is invalid' } = error;
    if (error.keyword === 'type') {
      // ajv says "must be integer,null" for a union type.
      const type = (error.params as { type: string | string[] }).type;
      message = `must be ${(Array.isArray(type) ? type : type.split(',')).join(' or ')}`;
    } else if (error.keyword === 'required' || error.keyword === 'dependentRequired') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      path = `${path}/${escapePointer(missing)}`;
      message =
        error.keyword === 'required'
          ? 'is required but missing'
          : `is required when ${(error.params as { property: string }).property} is present`;
    }
    const key = `${path}\n${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push({ path, message });
    }
  }
  return issues;
}

/**
 * What is wrong with a decoded job payload for the given Laravel profile; empty when it matches.
 * Works on the payload as pushed and on the reserved copy Redis's cjson re-encodes.
 */
export function validatePayload(payload: unknown, profile: LaravelProfile, options: PayloadValidationOptions = {}): PayloadIssue[] {
  checkProfile(profile);
  const validate = validator(profileFile(profile));
  validate(payload);
  const issues = toIssues(validate.errors);
  if (options.horizon) {
    const horizon = validator('horizon.json');
    horizon(payload);
    // A non-object payload was already reported by the profile schema.
    for (const issue of toIssues(horizon.errors)) {
      if (!issues.some((known) => known.path === issue.path && known.message === issue.message)) issues.push(issue);
    }
  }
  return issues;
}

/** Throws a PayloadSchemaError naming the first problem when the payload does not match. */
export function assertValidPayload(payload: unknown, profile: LaravelProfile, options: PayloadValidationOptions = {}): void {
  const issues = validatePayload(payload, profile, options);
  if (issues.length > 0) throw new PayloadSchemaError(profile, issues);
}
