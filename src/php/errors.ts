/**
 * Errors of the PHP codec. Both carry enough to find the problem without a debugger:
 * what was expected, what was found, and where.
 */

/** Malformed serialized input. `offset` is the byte position where reading stopped. */
export class PhpUnserializeError extends Error {
  override name = 'PhpUnserializeError';
  constructor(
    message: string,
    /** Byte offset into the input where the problem was found. */
    readonly offset: number,
  ) {
    super(`${message} at byte ${offset}`);
  }
}

/** A value that cannot be written in PHP's format (a cycle through arrays, an int out of range, …). */
export class PhpSerializeError extends Error {
  override name = 'PhpSerializeError';
  constructor(
    message: string,
    /** Where in the value the problem is, as a path such as `$.items[3].name`. */
    readonly path: string,
  ) {
    super(path ? `${message} at ${path}` : message);
  }
}
