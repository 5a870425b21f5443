/**
 * `laravel-queue-bridge/php`: PHP's serialize() format, lossless both ways.
 */
export { unserialize, PhpIncompleteObject, type UnserializeOptions } from './unserialize.js';
export { serialize, type SerializeOptions } from './serialize.js';
export { toJS, fromJS, phpClassOf, PHP_CLASS, PHP_ENUM, PHP_SERIALIZED, type FromJSHint, type JSPhpObject } from './js.js';
export { formatPhpFloat, parsePhpFloat, phpStringOfFloat } from './float.js';
export { PhpUnserializeError, PhpSerializeError } from './errors.js';
export {
  PhpArray,
  PhpObject,
  PhpFloat,
  PhpEnum,
  PhpRef,
  PhpSerializable,
  mangle,
  demangle,
  deref,
  type PhpKey,
  type PhpValue,
  type PropertyName,
  type Visibility,
} from './values.js';
