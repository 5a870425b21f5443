/**
 * Class shapes: the app's queueable classes as PHP's reflection reads them (`lqb shapes`), and
 * TypeScript declarations made from them for typed handlers.
 */
export type {
  ShapesFile,
  ClassShape,
  ClassKind,
  PropertyShape,
  DeclaredName,
  Expression,
  TranslatedMethod,
  Untranslated,
} from './shape.js';
export {
  evaluate,
  translatedMethod,
  // /shapes' name for it since before PHP's own conversion moved to src/php/string.ts.
  expressionString as phpString,
  uniqueIdOfValue,
  backoffOfValue,
  retryUntilOfValue,
  jsonOfValue,
  ExpressionError,
  Instant,
  type EvaluateOptions,
  type ExpressionValue,
} from './expression.js';
export { readShapes, parseShapes, shapesSchema, ShapesError } from './read.js';
export { reflectShapes, ReflectError, REFLECT_PHP, type ReflectOptions } from './reflect.js';
export { declarationsFor, typeName } from './types.js';
export {
  buildShapedPayload,
  shapedCommand,
  declaredForEnvelope,
  ShapeError,
  SHOULD_BE_ENCRYPTED,
  type ShapedCommand,
  type ShapedCommandOptions,
  type ShapedPayloadOptions,
} from './command.js';
