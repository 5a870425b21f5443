/**
 * `--shapes=FILE` (else env `LQB_SHAPES`): the app's class shapes, as `lqb shapes` writes them,
 * read and checked against schemas/shapes.schema.json. A file that cannot be read or is not a
 * shapes file is a usage error naming it.
 */
import { ShapesError, readShapes, type ShapesFile } from '../shapes/index.js';
import { UsageError, type Options } from './command.js';

export const shapesFlag = {
  shapes: { type: 'string', value: 'FILE', description: "the app's class shapes, as lqb shapes writes them", env: 'LQB_SHAPES' },
} satisfies Options;

/** The shapes the flag or LQB_SHAPES names, or undefined when neither does. */
export function shapesFrom(values: Record<string, unknown>): ShapesFile | undefined {
  const given =
    typeof values.shapes === 'string'
      ? { file: values.shapes, from: '--shapes' }
      : process.env.LQB_SHAPES
        ? { file: process.env.LQB_SHAPES, from: 'LQB_SHAPES' }
        : undefined;
  if (!given) return undefined;
  try {
    return readShapes(given.file);
  } catch (error) {
    if (error instanceof ShapesError) throw new UsageError(`${given.from}: ${error.message}`);
    throw error;
  }
}
