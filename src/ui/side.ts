/**
 * Which side ran a job, where a record of it really says so: a failure's exception text. PHP
 * writes `(string) $e` and Node's worker writes the same layout (src/worker/errors.ts,
 * exceptionText), so the headline and `Stack trace:` say nothing; the frames do. PHP's name the
 * file and line as `#0 /app/File.php(12): Foo->bar()` (or `#1 [internal function]: …`), Node's
 * as JavaScript's `file:LINE:COLUMN` (`#0 fn (/app/file.js:12:5)`, `#0 node:internal/…:95:5`).
 * A JavaScript stack as V8 prints it (`    at fn (/app/file.js:12:5)`, what the library's Horizon
 * recorder keeps for an Error handed to it) is Node's too.
 *
 * The trace that ends the text is read first: the outermost exception's, the one the worker
 * caught. A message may quote another trace (an HTTP error body, a PHP error relayed by Node),
 * but a message always comes before its own `Stack trace:` line, so an earlier trace (a cause's,
 * after which PHP and Node write `Next `) is read only when the later ones name no place, as an
 * exception made at the top of a script has only `#0 {main}`. No frames, or frames of both
 * kinds, and the answer is null: the page shows no side rather than a guess.
 */
export type Side = 'php' | 'node';

/** `#N FILE(LINE): call` or `#N [internal function]: call`: PHP's getTraceAsString(). */
const PHP_FRAME = /^#\d+ (?:\[internal function\]|\S.*\(\d+\)): /;
/** `#N [fn (]FILE:LINE:COLUMN[)]`: a V8 call site as src/worker/errors.ts numbers it. */
const NODE_FRAME = /^#\d+ \S.*:\d+:\d+\)?$/;
/** `at [fn (]FILE:LINE:COLUMN[)]`: a V8 call site as Error.stack prints it. */
const V8_FRAME = /^\s+at \S.*:\d+:\d+\)?$/;
const TRACE_HEADER = 'Stack trace:';

export function sideOfException(text: string | null | undefined): Side | null {
  if (typeof text !== 'string' || text === '') return null;
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  for (let header = lines.lastIndexOf(TRACE_HEADER); header !== -1; header = lines.lastIndexOf(TRACE_HEADER, header - 1)) {
    const judged = sideOfFrames(numberedFrames(lines.slice(header + 1)));
    if (judged !== 'none') return judged === 'both' ? null : judged;
    if (header === 0) break;
  }
  return v8Frames(lines) ? 'node' : null;
}

/** The `#N …` lines of a trace, from #0 until the numbering stops. */
function numberedFrames(lines: string[]): string[] {
  const frames: string[] = [];
  for (const line of lines) {
    if (!line.startsWith(`#${frames.length} `)) break;
    frames.push(line);
  }
  return frames;
}

/** PHP or Node when every frame that names a place names it one way; `{main}` and `new Promise (<anonymous>)` name none. */
function sideOfFrames(frames: string[]): Side | 'none' | 'both' {
  let php = false;
  let node = false;
  for (const frame of frames) {
    if (PHP_FRAME.test(frame)) php = true;
    else if (NODE_FRAME.test(frame)) node = true;
  }
  return php && node ? 'both' : php ? 'php' : node ? 'node' : 'none';
}

/** Whether the text ends in a V8 stack's `at` lines, one of them naming a file, line and column. */
function v8Frames(lines: string[]): boolean {
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.trim() === '') end--;
  let placed = false;
  for (let i = end - 1; i > 0 && /^\s+at /.test(lines[i]!); i--) placed ||= V8_FRAME.test(lines[i]!);
  return placed;
}
