/**
 * Laravel's `Str::slug($value, '_')`, which its default config uses to turn APP_NAME into the
 * Redis prefix (`…_database_`) and the cache prefix (`…_cache`). A prefix one letter off is a
 * worker that never sees the app's jobs, so this follows Laravel's steps: transliterate to ASCII
 * (Str::ascii, language 'en'), then '-' runs and '@' become words, and the rest is cleaned.
 *
 * The transliteration is ours, not voku/portable-ascii's full map: canonical decomposition with
 * the marks dropped covers accented Latin (é, ñ, İ, ǿ), the table below the letters that do not
 * decompose, Cyrillic and Greek, and a few symbols, each as Str::ascii writes them. What is not
 * covered is dropped, where Laravel may write something: other scripts (Arabic, Hebrew,
 * Georgian, Armenian, Devanagari, Thai… — Laravel drops CJK too), Latin letters outside these
 * rows (ŋ, ƒ, ſ, ĸ, ŀ…), compatibility forms (ﬃ, ㎏, full-width letters), and symbols beyond
 * € £ ¹²³ and dashes. test/connect/slug.test.ts compares names with PHP's own Str::slug.
 */

/** Lower-case results, as pairs: slug lowercases whatever Str::ascii gives. */
const TABLE = Object.fromEntries(
  [
    // Latin letters with no canonical decomposition
    'ß ss',
    'æ ae',
    'Æ ae',
    'ø o',
    'Ø o',
    'œ oe',
    'Œ oe',
    'đ d',
    'Đ d',
    'ð d',
    'Ð d',
    'ł l',
    'Ł l',
    'þ th',
    'Þ th',
    'ı i',
    'ĳ ij',
    'Ĳ ij',
    'ŉ n',
    'ﬁ fi',
    'ﬂ fl',
    // Symbols Str::ascii spells out; dashes become '-', which slug then turns into the separator
    '€ eur',
    '£ ps',
    '¹ 1',
    '² 2',
    '³ 3',
    '– -',
    '— -',
    '‐ -',
    '‑ -',
    '− -',
    // Cyrillic (Russian, Ukrainian, Serbian); capitals are lowercased first
    'а a',
    'б b',
    'в v',
    'г g',
    'д d',
    'е e',
    'ё e',
    'ж z',
    'з z',
    'и i',
    'й i',
    'к k',
    'л l',
    'м m',
    'н n',
    'о o',
    'п p',
    'р r',
    'с s',
    'т t',
    'у u',
    'ф f',
    'х x',
    'ц c',
    'ч c',
    'ш s',
    'щ shh',
    'ъ ie',
    'ы y',
    'ь ',
    'э e',
    'ю iu',
    'я ia',
    'є je',
    'і i',
    'ї yi',
    'ґ g',
    'ђ dj',
    'ј j',
    'љ lj',
    'њ nj',
    'ћ c',
    'џ dz',
    'ў ',
    // Greek: Str::ascii writes some capitals unlike their small letters, and ύ ϋ ΰ ώ unlike υ ω
    'α a',
    'β v',
    'γ gh',
    'δ d',
    'ε e',
    'ζ z',
    'η i',
    'θ th',
    'ι i',
    'κ k',
    'λ l',
    'μ m',
    'ν n',
    'ξ ks',
    'ο o',
    'π p',
    'ρ r',
    'σ s',
    'ς s',
    'τ t',
    'υ i',
    'φ f',
    'χ kh',
    'ψ ps',
    'ω o',
    'Β b',
    'Γ g',
    'Η h',
    'Υ y',
    'Χ x',
    'ύ y',
    'ϋ y',
    'ΰ y',
    'ώ w',
  ].map((pair) => [pair[0]!, pair.slice(2)]),
) as Record<string, string>;

/** One character as Str::ascii writes it (lowercased): the table, else its base letter, else nothing. */
function ascii(char: string): string {
  const known = TABLE[char] ?? TABLE[char.toLowerCase()];
  if (known !== undefined) return known;
  if (/\s/u.test(char)) return ' ';
  const base = char.normalize('NFD').replace(/\p{M}/gu, '');
  if (/^[\x00-\x7f]*$/.test(base)) return base;
  return TABLE[base] ?? TABLE[base.toLowerCase()] ?? '';
}

/** `Str::slug(value, separator)` for separator '_' (or '-'), language 'en'. */
export function slug(value: string, separator = '_'): string {
  const other = separator === '-' ? '_' : '-';
  const sep = escape(separator);
  return Array.from(value, ascii)
    .join('')
    .replace(new RegExp(`${escape(other)}+`, 'g'), separator)
    .replaceAll('@', `${separator}at${separator}`)
    .toLowerCase()
    .replace(new RegExp(`[^${sep}a-z0-9\\s]+`, 'g'), '')
    .replace(new RegExp(`[${sep}\\s]+`, 'g'), separator)
    .replace(new RegExp(`^${sep}+|${sep}+$`, 'g'), '');
}

const escape = (text: string) => text.replace(/[\\^$.*+?()[\]{}|-]/g, '\\$&');
