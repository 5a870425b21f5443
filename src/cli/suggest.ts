/**
 * "Did you mean": the known word nearest a mistyped one (a flag, a command), when it is near
 * enough to be what was meant.
 */

/** Edits (insert, delete, replace, swap two neighbours) from one word to the other. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known word nearest `word`, or undefined when none is near: at most a third of the word's
 * letters off (one at least), or the start of exactly one known word (`--hand` for `--handlers`).
 */
export function nearest(word: string, known: readonly string[]): string | undefined {
  const starting = known.filter((candidate) => word.length >= 2 && candidate.startsWith(word));
  if (starting.length === 1) return starting[0];
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(word.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}
