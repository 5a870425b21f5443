/**
 * Reading a shapes file: JSON checked against `schemas/shapes.schema.json` (ajv), each class
 * filed under its own name. A problem is one line naming the file and the JSON path.
 */
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { loadAjv2020 } from '../internal/ajv.js';
import { readSchemaFile } from '../internal/schemas.js';
import type { ShapesFile } from './shape.js';

export class ShapesError extends Error {
  override name = 'ShapesError';
  /** The file (or the label given for text), and the JSON path of the problem ('' for the whole). */
  constructor(
    readonly file: string,
    readonly path: string,
    reason: string,
  ) {
    super(`${file}: ${path === '' ? '(root)' : path} ${reason}`);
  }
}

let validate: ValidateFunction | undefined;
function validator(): ValidateFunction {
  if (!validate) {
    const ajv = new (loadAjv2020())({ allErrors: false, strict: true, allowUnionTypes: true });
    validate = ajv.compile(readSchemaFile('shapes.schema.json'));
  }
  return validate;
}

/** The shapes file's JSON Schema, as read from `schemas/shapes.schema.json`. */
export function shapesSchema(): object {
  return structuredClone(readSchemaFile('shapes.schema.json'));
}

/** Reads and checks a shapes file. */
export function readShapes(file: string): ShapesFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ShapesError(file, '', `cannot be read: ${(error as Error).message}`);
  }
  return parseShapes(text, file);
}

/** Checks shapes given as JSON text (or already parsed); `file` names them in errors. */
export function parseShapes(input: unknown, file = 'shapes'): ShapesFile {
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (error) {
      throw new ShapesError(file, '', `is not JSON: ${(error as Error).message}`);
    }
  }
  const check = validator();
  if (!check(value)) throw new ShapesError(file, ...describe(check.errors![0]!));
  const shapes = value as ShapesFile;
  for (const [key, shape] of Object.entries(shapes.classes)) {
    if (shape.name !== key)
      throw new ShapesError(
        file,
        `/classes/${pointer(key)}/name`,
        `must be the class it is filed under (${JSON.stringify(key)}), not ${JSON.stringify(shape.name)}`,
      );
  }
  return shapes;
}

const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

function describe(error: ErrorObject): [string, string] {
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return [`${error.instancePath}/${pointer(missing)}`, 'is required but missing'];
  }
  if (error.keyword === 'enum')
    return [
      error.instancePath,
      `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`,
    ];
  if (error.keyword === 'const')
    return [error.instancePath, `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}`];
  if (error.keyword === 'type') {
    const type = (error.params as { type: string | string[] }).type;
    return [error.instancePath, `must be ${(Array.isArray(type) ? type : type.split(',')).join(' or ')}`];
  }
  if (error.keyword === 'propertyNames')
    return [
      error.instancePath,
      `has a key that is not allowed (${JSON.stringify((error.params as { propertyName: string }).propertyName)})`,
    ];
  return [error.instancePath, error.message ?? 'is invalid'];
}
