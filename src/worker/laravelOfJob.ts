/**
 * Which Laravel a job is read as, decided here and nowhere else: the app's version where its
 * vendor/composer/installed.json (beside --env or connect({ env }), or the shapes file read from
 * it) says it; else what the job's own payload shows of the Laravel that wrote it (`createdAt` is
 * written from 12.11, the hidden context that names a unique job's lock from 11.39); else the
 * version given (--laravel / `laravel`); else unknown, which the worker says once at start. The
 * failure words and the 11.39 lock-key question ask it.
 */
import { envelopeUniqueContext } from './locks/uniqueContext.js';

/** The lowest version that writes what the envelope shows, where it shows one. */
export function versionShownBy(envelope: object | undefined): string | undefined {
  if (envelope === undefined) return undefined;
  // 12.11+: Queue::createPayloadArray writes createdAt into every payload.
  if ('createdAt' in envelope) return '12.11';
  // 11.39+: PendingDispatch writes the lock it took into the hidden context.
  return envelopeUniqueContext(envelope as Record<string, unknown>).key !== undefined ? '11.39' : undefined;
}

/**
 * The version a job is read as: the app's where known, else what its payload shows; undefined
 * when neither says. `onlyGiven`: the app's version is only --laravel's, which a payload showing
 * a later Laravel outranks (it names the lowest version that writes it, so a given version at or
 * above it still says more).
 */
export function laravelOfJob(app: string | null | undefined, envelope: object | undefined, onlyGiven = false): string | undefined {
  const shown = versionShownBy(envelope);
  if (app === null || app === undefined) return shown;
  return onlyGiven && shown !== undefined && below(app, shown) ? shown : app;
}

/** Whether version `a` is below `b` by major and minor (`v12.67.0`, `8`); a version that reads as none is below. */
function below(a: string, b: string): boolean {
  const parts = (v: string) => (/^v?(\d+)(?:\.(\d+))?/.exec(v.trim()) ?? []).slice(1).map((n) => Number(n ?? 0));
  const [am = -1, an = 0] = parts(a);
  const [bm = 0, bn = 0] = parts(b);
  return am < bm || (am === bm && an < bn);
}
