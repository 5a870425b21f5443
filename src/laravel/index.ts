/**
 * Laravel's side of the wire: the job envelope, what Laravel puts in a command, encryption.
 */
export {
  decodePayload,
  encodePayload,
  commandOf,
  detectProfile,
  PayloadError,
  LARAVEL_PROFILES,
  CALL_QUEUED_HANDLER,
  type DecodedPayload,
  type Envelope,
  type LaravelProfile,
  type PayloadFormat,
} from './payload.js';
export {
  decodeJson,
  encodeJson,
  encodeString,
  plainJson,
  isJsonObject,
  isJsonRecord,
  jsonNumber,
  JsonSyntaxError,
  type JsonDecodeOptions,
  type JsonValue,
  type JsonObject,
} from './json.js';
export {
  viewCommand,
  QUEUEABLE_FIELDS,
  CALL_QUEUED_LISTENER,
  SEND_QUEUED_NOTIFICATIONS,
  SEND_QUEUED_MAILABLE,
  CALL_QUEUED_CLOSURE,
  type QueueableFields,
  type PropertyView,
  type UserJobView,
  type ListenerView,
  type NotifiableView,
  type NotificationView,
  type MailableView,
  type ClosureView,
  type StringJobView,
  type EncryptedView,
  type JobView,
} from './views.js';
export {
  modelClass,
  asModelIdentifier,
  asDate,
  asCollection,
  asEnum,
  asEloquentModel,
  MODEL_IDENTIFIER,
  type ModelIdentifierView,
  type PhpDateView,
  type CollectionView,
  type EnumView,
  type EloquentModelView,
} from './values.js';
export { Encrypter, DecryptError, parseAppKey, supportsCipher, type Cipher } from './encrypter.js';
export {
  buildJob,
  QueueablePropertyError,
  buildListener,
  buildModelIdentifier,
  buildDate,
  buildPayload,
  randomId,
  type JobSpec,
  type ListenerSpec,
  type PropertySpec,
  type PayloadOptions,
  type BuiltPayload,
} from './builders.js';
export { nextInChain, type NextLink, type NextLinkOptions, type LinkEnvelope } from './chain.js';
export {
  validatePayload,
  assertValidPayload,
  schemaFor,
  horizonSchema,
  PayloadSchemaError,
  type PayloadIssue,
  type PayloadValidationOptions,
} from './schemas.js';
