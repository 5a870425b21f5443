/**
 * What makes a job unique, and what names its lock: the ShouldBeUnique interfaces, and the
 * uniqueId Laravel appends to the key (a handler's or dispatch's uniqueId function, uniqueId()
 * as `lqb shapes` translated it, else the property), in PHP's string conversion.
 */
import { PhpFloat, toJS, type PhpObject, type PhpValue } from '../../php/index.js';
import { PhpStringError, phpString } from '../../php/string.js';
import type { ClassShape } from '../../shapes/shape.js';
import { ExpressionError, evaluate, translatedMethod, uniqueIdOfValue } from '../../shapes/expression.js';
import type { JobMethods } from '../handlers.js';

export const SHOULD_BE_UNIQUE = 'Illuminate\\Contracts\\Queue\\ShouldBeUnique';
export const SHOULD_BE_UNIQUE_UNTIL_PROCESSING = 'Illuminate\\Contracts\\Queue\\ShouldBeUniqueUntilProcessing';

/** Why a unique job's lock cannot be named: its uniqueId() is PHP that Node cannot run. */
export class UnnamedLockError extends Error {
  override name = 'UnnamedLockError';
}

/**
 * The uniqueId Laravel appends: the handler's uniqueId function when it has one; else uniqueId()
 * as `lqb shapes` translated it (refused when it could not); else the property.
 */
export async function uniqueIdOf(command: PhpObject, shape: ClassShape | undefined, given?: JobMethods['uniqueId']): Promise<string> {
  if (given) return givenUniqueId(command, given);
  return uniqueIdFromCommand(command, shape);
}

/** The uniqueId when no function gives it: uniqueId() as translated, else the property; at once, throwing UnnamedLockError. */
export function uniqueIdFromCommand(command: PhpObject, shape: ClassShape | undefined): string {
  const translated = translatedMethod(shape, 'uniqueId');
  if (translated && 'untranslated' in translated) {
    throw new UnnamedLockError(
      `${command.className} defines uniqueId(), which lqb shapes could not translate (${translated.untranslated}), its handler gives no uniqueId function, and the payload carries no lock key (Laravel 11.39+ does): its unique lock cannot be released`,
    );
  }
  if (translated) {
    try {
      return uniqueIdOfValue(evaluate(translated.expression, command));
    } catch (error) {
      if (error instanceof ExpressionError)
        throw new UnnamedLockError(`${command.className}'s uniqueId() as translated cannot be evaluated on this job: ${error.message}`);
      throw error;
    }
  }
  const property = command.get('uniqueId');
  if (property !== undefined) return uniqueIdString(property);
  if (shape && Object.hasOwn(shape.declared, 'uniqueId')) return uniqueIdString(shape.declared.uniqueId as PhpValue);
  return '';
}

/** A uniqueId property (or declared value) as the key's concatenation converts it: one with no string form leaves the lock unnamed. */
function uniqueIdString(value: PhpValue): string {
  try {
    return phpString(value);
  } catch (error) {
    if (error instanceof PhpStringError) throw new UnnamedLockError(`a uniqueId that is ${error.message}`);
    throw error;
  }
}

/** A handler's (or dispatch's) uniqueId function, its result as PHP's string conversion makes it. */
async function givenUniqueId(command: PhpObject, given: NonNullable<JobMethods['uniqueId']>): Promise<string> {
  let value: unknown;
  try {
    value = await given({ name: command.className, command: toJS(command) as Record<string, unknown> });
  } catch (error) {
    // The job has run: a throw here names the lock as unknown, and never fails the job.
    throw new UnnamedLockError(`the uniqueId function given for ${command.className} threw: ${(error as Error)?.message ?? String(error)}`);
  }
  try {
    return phpString(typeof value === 'number' && !Number.isInteger(value) ? new PhpFloat(value) : (value as PhpValue));
  } catch (error) {
    throw new UnnamedLockError(
      `the uniqueId function given for ${command.className} returned what has no string form: ${(error as Error).message}`,
    );
  }
}
