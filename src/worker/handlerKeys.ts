/**
 * Handler keys as JavaScript source can spoil them. A PHP class name holds backslashes, and in a
 * JS string `'App\Jobs\ResizeImage'` is `AppJobsResizeImage` (`\J` is just `J`), while
 * `'App\Jobs\notify\Send'` holds a newline (`\n`). Such a key matches no job, so every job of that
 * class would fail (or be given back) "for want of a handler": it is refused when the worker is
 * made, naming the key and how to write it.
 */
import { editDistance } from './WorkerOptions.js';

/** The namespace words Laravel apps put their classes under; one glued to the next word is a lost backslash. */
const NAMESPACE_WORDS = ['App', 'Jobs', 'Listeners', 'Events', 'Notifications', 'Mail', 'Models', 'Domain', 'Modules'];
/**
 * A class name that starts as a namespace would, glued: `App` then a capital (`AppJobs…`), or two
 * namespace words in a row (`DomainJobs…`). A class of the global namespace (`SendEmail`,
 * `MailHandler`) is left alone.
 */
const SQUASHED = new RegExp(`^App[A-Z]|^(?:${NAMESPACE_WORDS.join('|')})(?:${NAMESPACE_WORDS.slice(1).join('|')})[A-Z]`);

/** What is wrong with one handler key, as one line, or undefined. */
export function handlerKeyProblem(key: string): string | undefined {
  const className = key.split('@')[0]!;
  const how = "write each backslash twice in JavaScript source, e.g. 'App\\\\Jobs\\\\ResizeImage' (or String.raw`App\\Jobs\\ResizeImage`)";
  const control = /[\x00-\x1f\x7f]/.exec(className);
  if (control) {
    const escape =
      { '\n': '\\n', '\t': '\\t', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\0': '\\0' }[control[0]] ??
      `\\x${control[0].charCodeAt(0).toString(16).padStart(2, '0')}`;
    return `handler key ${JSON.stringify(key)} holds a control character where a backslash was meant ('${escape}' in the source is one character): ${how}`;
  }
  if (className.includes('\\') || !SQUASHED.test(className)) return undefined;
  return `handler key ${JSON.stringify(key)} has no backslashes, so it matches no PHP class (probably ${JSON.stringify(unsquash(className) + key.slice(className.length))} was meant): ${how}`;
}

/** The first handler key a lost backslash spoiled, as one line, or undefined. */
export function handlerKeysProblem(keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const problem = handlerKeyProblem(key);
    if (problem) return problem;
  }
  return undefined;
}

/** `AppJobsResizeImage` with its namespace backslashes back, as far as the known namespace words tell. */
function unsquash(name: string): string {
  let rest = name;
  const parts: string[] = [];
  for (;;) {
    const word = NAMESPACE_WORDS.find((w) => rest.startsWith(w) && /^[A-Z]/.test(rest.slice(w.length)));
    if (!word) break;
    parts.push(word);
    rest = rest.slice(word.length);
  }
  return [...parts, rest].join('\\');
}

/**
 * The known key nearest a name that has no handler, for "no handler" lines: compared without
 * case or backslashes (a squashed or miscased key is still found), and only when close enough
 * to be the one meant.
 */
export function nearestHandlerKey(name: string, keys: readonly string[]): string | undefined {
  const plain = (text: string) => text.replaceAll('\\', '').toLowerCase();
  const target = plain(name);
  let best: { key: string; distance: number } | undefined;
  for (const key of keys) {
    const distance = editDistance(plain(key), target);
    if (!best || distance < best.distance) best = { key, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(target.length / 3)) ? best.key : undefined;
}
