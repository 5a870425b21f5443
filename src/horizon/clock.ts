/**
 * Times as Horizon writes them. Its records hold `microtime(true)` cast to a string, which PHP
 * prints with 14 significant digits (`1795636688.4485`: four decimals today, trailing zeros
 * dropped); its expiries are whole UNIX seconds; its runtimes are milliseconds rounded by PHP's
 * round() to two decimals.
 */

/** Seconds since the epoch, with a fraction: the clock Horizon's records are stamped with. */
export type Clock = () => number;

export const systemClock: Clock = () => (performance.timeOrigin + performance.now()) / 1000;

/** A float as PHP's `(string)` cast prints it (precision 14): what `str_replace(',', '.', microtime(true))` gives. */
export function phpFloatString(value: number): string {
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const text = String(Number(value.toPrecision(14)));
  // PHP writes exponents as 1.0E+25; times never get there, but say so rather than differ quietly.
  return text.includes('e') ? text.replace(/e([+-])/, (_, sign: string) => `.0E${sign}`).replace(/\.(\d+)\.0E/, '.$1E') : text;
}

/**
 * phpFloatString of a time of this era (10^9 to 10^10 s: 2001 to 2286), whose 14 digits are four
 * decimals: the digits are the time in 0.1 ms, rounded. Where the product's own rounding could
 * tip a half (nearer one than 0.01), and for any other value, phpFloatString decides.
 */
export function phpTimeString(time: number): string {
  if (!(time >= 1e9 && time < 1e10)) return phpFloatString(time);
  const tenths = time * 1e4;
  const fraction = tenths - Math.floor(tenths);
  if (Math.abs(fraction - 0.5) < 0.01) return phpFloatString(time);
  const digits = String(Math.round(tenths));
  // 10^14 itself (a time rounding up to 10^10) has a digit more: PHP's rules then.
  if (digits.length !== 14) return phpFloatString(time);
  let end = 14;
  while (end > 10 && digits.charCodeAt(end - 1) === 48) end--;
  return end === 10 ? digits.slice(0, 10) : `${digits.slice(0, 10)}.${digits.slice(10, end)}`;
}

/**
 * PHP's round($value, 2): half away from zero, after PHP's pre-rounding, so 1.005 is 1.01 as in
 * PHP (a plain Math.round of 100.49999… would give 1).
 */
export function phpRound2(value: number): number {
  const hundredths = Math.abs(value) * 100;
  // Pre-rounding to 15 digits moves a value under 10^6 by less than 10^-9: only one that close to
  // a half can round otherwise, so any other (a worker's every runtime, nearly) skips toPrecision.
  const clear = hundredths < 1e6 && Math.abs(hundredths - Math.floor(hundredths) - 0.5) > 1e-6;
  const scaled = clear ? hundredths : Number(hundredths.toPrecision(15));
  const rounded = Math.floor(scaled + 0.5) / 100;
  return value < 0 ? -rounded : rounded;
}

/**
 * A runtime in ms as Horizon's records hold it: PHP's round($ms, 2), printed as PHP prints a
 * float. A value of two decimals short of 10^12 has at most 14 digits, which JavaScript prints
 * as PHP does (the shortest text that reads back, here that of the rounded value itself), so a
 * worker's every job skips PHP's printing rules.
 */
export function phpRuntimeText(ms: number): string {
  const rounded = phpRound2(Math.max(0, ms));
  return rounded < 1e12 ? String(rounded) : phpFloatString(rounded);
}
