/** The few statistics the benches print: medians of runs and shares between two of them. */

/** The middle value (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A share as a signed percentage: `+13.5%`, `-2.0%`. */
export function signedPercent(share: number): string {
  return `${share >= 0 ? '+' : ''}${(share * 100).toFixed(1)}%`;
}

/** How much more `more` is than `base`, as a signed percentage. */
export function percentMore(more: number, base: number): string {
  return signedPercent((more - base) / base);
}
