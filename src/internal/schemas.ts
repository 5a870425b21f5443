/**
 * The JSON Schemas of `schemas/`, built into the package (scripts/embed.mjs) rather than read from
 * disk, so that a bundled service carries them. `schemas/` still ships, for other tools to use.
 */
import { SCHEMA_FILES } from './schemas.generated.js';

const parsed = new Map<string, object>();

/** A schema file's JSON (`payload-8.json`), parsed once; the same object each time. */
export function readSchemaFile(file: string): object {
  let schema = parsed.get(file);
  if (schema) return schema;
  const text = SCHEMA_FILES[file];
  if (text === undefined) throw new Error(`the schema ${file} is not built into this package`);
  parsed.set(file, (schema = JSON.parse(text) as object));
  return schema;
}
