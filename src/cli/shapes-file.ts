/**
 * `--shapes=FILE` (else env `LQB_SHAPES`): the app's class shapes, as `lqb shapes` writes them.
 * Checked only as far as the commands here read them: version 1, and each class's `methods`
 * and `properties` lists. A file that cannot be read or is malformed is a usage error naming it.
 */
import { readFileSync } from 'node:fs';
import type { ShapesFile } from '../shapes/shape.js';
import { UsageError } from './command.js';

export const shapesFlag = { shapes: { type: 'string' } } as const;

/** The shapes the flag or LQB_SHAPES names, or undefined when neither does. */
export function shapesFrom(values: Record<string, unknown>): ShapesFile | undefined {
  const given = typeof values.shapes === 'string' ? { file: values.shapes, from: '--shapes' } : process.env.LQB_SHAPES ? { file: process.env.LQB_SHAPES, from: 'LQB_SHAPES' } : undefined;
  if (!given) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(given.file, 'utf8'));
  } catch (error) {
    throw new UsageError(`${given.from}: ${given.file} cannot be read as JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const problem = shapesProblem(parsed);
  if (problem) throw new UsageError(`${given.from}: ${given.file} is not a shapes file: ${problem}`);
  return parsed as ShapesFile;
}

function shapesProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'expected a JSON object';
  const file = value as { version?: unknown; classes?: unknown };
  if (file.version !== 1) return `expected "version": 1, found ${JSON.stringify(file.version)}`;
  if (file.classes === null || typeof file.classes !== 'object' || Array.isArray(file.classes)) return 'expected "classes" to be an object';
  for (const [name, shape] of Object.entries(file.classes)) {
    const s = shape as { methods?: unknown; properties?: unknown } | null;
    if (s === null || typeof s !== 'object') return `classes[${JSON.stringify(name)}] is not an object`;
    if (!Array.isArray(s.methods) || !s.methods.every((m) => typeof m === 'string')) return `classes[${JSON.stringify(name)}].methods is not a list of names`;
    if (!Array.isArray(s.properties) || !s.properties.every((p) => p !== null && typeof p === 'object')) return `classes[${JSON.stringify(name)}].properties is not a list`;
  }
  return undefined;
}
