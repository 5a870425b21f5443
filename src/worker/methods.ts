/**
 * The PHP methods a worker needs the results of and cannot run: a unique job's uniqueId(), which
 * names the lock its dispatch took (before Laravel 11.39, whose payload carries the key). When
 * neither `lqb shapes` translated the method nor the class's handler gives it in JavaScript, the
 * worker cannot free that lock after the job runs: every later dispatch of the job would be
 * dropped for ever. So such a class is refused at start, before any job is taken.
 */
import type { ShapesFile } from '../shapes/shape.js';
import { findShape } from '../shapes/command.js';
import { translatedMethod } from '../shapes/expression.js';
import type { HandlerMap, JobMethods } from './handlers.js';
import { SHOULD_BE_UNIQUE, parseVersion } from './locks/index.js';

/** A class the worker handles and must not run: the method it cannot know, and why. */
export interface Unanswerable {
  className: string;
  method: 'uniqueId';
  reason: string;
}

/** From Laravel 11.39 a unique job's payload carries the key its dispatch locked: nothing to compute. */
export function payloadsCarryLockKeys(laravel: string | null | undefined): boolean {
  const version = parseVersion(laravel);
  return !!version && (version[0] > 11 || (version[0] === 11 && version[1] >= 39));
}

/** Each handled job class whose lock's key no one can give the worker (the app's version, where known, else the shapes'). */
export function unanswerableMethods(
  handlers: HandlerMap,
  shapes: ShapesFile | undefined,
  laravel = shapes?.laravel ?? undefined,
): Unanswerable[] {
  if (payloadsCarryLockKeys(laravel)) return [];
  const found: Unanswerable[] = [];
  for (const [name, handler] of Object.entries(handlers)) {
    const shape = findShape(shapes, name);
    if (!shape?.interfaces.includes(SHOULD_BE_UNIQUE) || (handler as JobMethods).uniqueId) continue;
    const translated = translatedMethod(shape, 'uniqueId');
    if (translated && 'untranslated' in translated) found.push({ className: name, method: 'uniqueId', reason: translated.untranslated });
  }
  return found;
}

/** The line that names the class and the method, and what to do. */
export function unanswerableLine(refusal: Unanswerable, share: boolean): string {
  const outcome = share ? 'its jobs are given back for PHP workers' : 'no job is taken';
  return `${refusal.className} is ShouldBeUnique and defines ${refusal.method}(), which lqb shapes could not translate (${refusal.reason}), and its handler gives no ${refusal.method} function: Node could never release its lock, so ${outcome} (give the handler a ${refusal.method}(job) function)`;
}

/** Said once at start by a worker without shapes, which cannot tell which classes define uniqueId(). */
export const WITHOUT_SHAPES_LINE =
  'without class shapes (--shapes), the unique lock of a ShouldBeUnique job whose class defines uniqueId() cannot be known before Laravel 11.39 (whose payload carries its key): such a lock is left held; give --shapes, or its handler a uniqueId(job) function';
