/**
 * Bytes that are not UTF-8, where the model needs a JS string: a class name (PHP allows any byte
 * from 0x80 to 0xff in one, and its own tests use Latin-1 names) and a key `toJS` names a
 * property with.
 *
 * The spelling is Python's "surrogateescape": every run of valid UTF-8 is decoded as usual, and
 * each byte that is not part of one becomes the lone surrogate U+DC00 + byte (0xe4 is "\udce4").
 * Decoded UTF-8 never holds a surrogate, so an escaped name is never equal to a valid one, two
 * escaped names are equal only when their bytes are, and `escapedBytes` gives the bytes back.
 */

/** The escaped spelling of bytes that are not UTF-8 (valid UTF-8 comes out decoded as usual). */
export function escapeBytes(bytes: Uint8Array): string {
  let text = '';
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      text += String.fromCharCode(lead);
      i++;
      continue;
    }
    const size = utf8SequenceAt(bytes, i);
    if (size === 0) {
      text += String.fromCharCode(ESCAPE_BASE + lead);
      i++;
      continue;
    }
    text += Buffer.from(bytes.buffer, bytes.byteOffset + i, size).toString('utf8');
    i += size;
  }
  return text;
}

/** True when `text` holds an escaped byte: then its bytes are `escapedBytes(text)`, not its UTF-8. */
export function hasEscapes(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= ESCAPE_BASE + 0x80 && code <= ESCAPE_BASE + 0xff && !isHighSurrogate(text.charCodeAt(i - 1))) return true;
  }
  return false;
}

/** The bytes an escaped spelling stands for: escaped bytes as themselves, anything else as UTF-8. */
export function escapedBytes(text: string): Buffer {
  const parts: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= ESCAPE_BASE + 0x80 && code <= ESCAPE_BASE + 0xff && !isHighSurrogate(text.charCodeAt(i - 1))) {
      parts.push(code - ESCAPE_BASE);
      continue;
    }
    // A pair of surrogates is one character of four bytes.
    const end = isHighSurrogate(code) && i + 1 < text.length ? i + 2 : i + 1;
    for (const byte of Buffer.from(text.slice(i, end), 'utf8')) parts.push(byte);
    i = end - 1;
  }
  return Buffer.from(parts);
}

const ESCAPE_BASE = 0xdc00;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code < 0xdc00;
}

/**
 * The length of the valid UTF-8 sequence that starts at `at` with a byte of 0x80 or more, or 0
 * when none does (a stray continuation, an overlong form, a surrogate, past U+10FFFF, cut short).
 */
function utf8SequenceAt(bytes: Uint8Array, at: number): number {
  const lead = bytes[at]!;
  let more: number;
  let code: number;
  let least: number;
  if (lead >= 0xc2 && lead < 0xe0) {
    more = 1;
    code = lead & 0x1f;
    least = 0x80;
  } else if (lead >= 0xe0 && lead < 0xf0) {
    more = 2;
    code = lead & 0x0f;
    least = 0x800;
  } else if (lead >= 0xf0 && lead < 0xf5) {
    more = 3;
    code = lead & 0x07;
    least = 0x10000;
  } else return 0;
  if (at + more >= bytes.length) return 0;
  for (let k = 1; k <= more; k++) {
    const next = bytes[at + k]!;
    if ((next & 0xc0) !== 0x80) return 0;
    code = (code << 6) | (next & 0x3f);
  }
  if (code < least || code > 0x10ffff || (code >= 0xd800 && code < 0xe000)) return 0;
  return more + 1;
}
