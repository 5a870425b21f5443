/**
 * PHP 8 spells a float in `serialize()` with the shortest digits that read back to the same
 * double (serialize_precision = -1), laid out the way its `zend_gcvt` lays them out:
 *
 * - `INF`, `-INF`, `NAN`, and `-0` for negative zero;
 * - plain decimals while the decimal exponent stays within -4 … 17: `0.1`, `100`, `0.0001`;
 * - otherwise scientific with at least one fraction digit and a signed exponent: `1.0E+25`, `1.5E-7`.
 *
 * JavaScript's `toExponential()` without an argument yields the same shortest digits, so the
 * digits come from there and only the layout is PHP's.
 */
export function formatPhpFloat(value: number): string {
  if (value !== value) return 'NAN';
  if (value === Infinity) return 'INF';
  if (value === -Infinity) return '-INF';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const size = Math.abs(value);
  // Between 1e-4 and 1e17 both languages write plain decimals with the same shortest digits.
  if (size >= 1e-4 && size < 1e17) return String(value);

  // Beyond 1e21 and below 1e-6 JavaScript writes the same digits in scientific form too
  // ("1e+25", "-1.5e-7"): only the layout differs.
  const js = String(value);
  const jsE = js.indexOf('e');
  if (jsE > 0) {
    const mantissa = js.slice(0, jsE);
    return `${mantissa.includes('.') ? mantissa : mantissa + '.0'}E${js.slice(jsE + 1)}`;
  }

  const sign = value < 0 ? '-' : '';
  const exp = size.toExponential(); // "d.ddde±x"
  const e = exp.indexOf('e');
  const digits = exp.charCodeAt(1) === 46 /* . */ ? exp[0] + exp.slice(2, e) : exp.slice(0, e);
  // zend_dtoa's decpt: the value is 0.DIGITS × 10^decpt.
  const decpt = Number(exp.slice(e + 1)) + 1;

  if (decpt < -3 || decpt > 17) {
    const power = decpt - 1;
    const fraction = digits.length > 1 ? digits.slice(1) : '0';
    return `${sign}${digits[0]}.${fraction}E${power < 0 ? '-' : '+'}${Math.abs(power)}`;
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
  if (digits.length <= decpt) return sign + digits + '0'.repeat(decpt - digits.length);
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

/**
 * True when `text` is exactly `formatPhpFloat(value)`, found without building that string for
 * the commonest case it costs most to build: a number in scientific form, which JavaScript
 * writes with the same digits, `e` for `E`, and no `.0` after a lone digit (`1e+25`, `1.0E+25`).
 */
export function spellsAsPhp(text: string, value: number): boolean {
  const size = Math.abs(value);
  // Where JavaScript writes a plain decimal, compare with PHP's spelling as built.
  const jsScientific = size >= 1e21 || (size > 0 && size < 1e-6);
  if (!jsScientific) return formatPhpFloat(value) === text;
  const js = String(value);
  let at = 0;
  let fraction = false;
  for (let i = 0; i < js.length; i++) {
    const code = js.charCodeAt(i);
    if (code === 101 /* e */) {
      if (!fraction) {
        if (text.charCodeAt(at) !== 46 /* . */ || text.charCodeAt(at + 1) !== 48 /* 0 */) return false;
        at += 2;
      }
      if (text.charCodeAt(at++) !== 69 /* E */) return false;
      continue;
    }
    if (code === 46 /* . */) fraction = true;
    if (text.charCodeAt(at++) !== code) return false;
  }
  return at === text.length;
}

/**
 * Reads the float spellings PHP's `unserialize()` accepts: `[+-]?` digits with an optional
 * fraction and exponent, `INF`, `-INF`, `NAN`. Returns undefined for anything else.
 */
export function parsePhpFloat(text: string): number | undefined {
  if (text === 'INF') return Infinity;
  if (text === '-INF') return -Infinity;
  if (text === 'NAN') return NaN;
  if (!FLOAT_SYNTAX.test(text)) return undefined;
  return Number(text);
}

const FLOAT_SYNTAX = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/**
 * PHP's string conversion of a float (`(string) $f`, `'…' . $f`): %.14G under the default
 * `precision` of 14, with ".0" kept before an exponent, as lock keys and tags spell it (not
 * serialize()'s shortest round-trip form, which formatPhpFloat writes).
 */
export function phpStringOfFloat(value: number): string {
  if (Number.isNaN(value)) return 'NAN';
  if (!Number.isFinite(value)) return value > 0 ? 'INF' : '-INF';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const { digits, exponent, tieDown } = fourteenDigits(Math.abs(value));
  const sign = value < 0 ? '-' : '';
  // zend_dtoa hands back a tie it rounded down with its trailing zeros (1.0000000000010E+14).
  const significant = tieDown ? digits : digits.replace(/0+$/, '');
  if (exponent < -4 || exponent >= 14) {
    const fraction = significant.slice(1) || '0';
    return `${sign}${significant[0]}.${fraction}E${exponent < 0 ? '-' : '+'}${Math.abs(exponent)}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${significant}`;
  const whole = significant.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = significant.slice(exponent + 1);
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * A positive double rounded to 14 significant digits as PHP's zend_gcvt rounds (to nearest, a
 * tie to even: 123456789012345 is 1.2345678901234E+14, where JavaScript's toPrecision rounds a
 * tie up). The exact value is read to 100 digits, past where any double's expansion could hide
 * a non-zero digit behind zeros that would make a tie look like one.
 */
function fourteenDigits(value: number): { digits: string; exponent: number; tieDown: boolean } {
  const [mantissa, power] = value.toExponential(99).split('e') as [string, string];
  const all = mantissa.replace('.', '');
  let exponent = Number(power);
  let digits = all.slice(0, 14);
  const rest = all.slice(14);
  const tie = rest[0] === '5' && !/[1-9]/.test(rest.slice(1));
  const up = rest[0]! > '5' || (rest[0] === '5' && (!tie || Number(digits[13]) % 2 === 1));
  if (up) {
    const next = (BigInt(digits) + 1n).toString();
    if (next.length > 14) {
      digits = next.slice(0, 14);
      exponent += 1;
    } else digits = next;
  }
  return { digits, exponent, tieDown: tie && !up };
}
