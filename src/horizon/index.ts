/**
 * Horizon's records of Node's work, so that Laravel Horizon's dashboard shows the jobs Node
 * pushes, runs, releases and fails as if its own workers had done it.
 */
export {
  HorizonRecorder,
  DEFAULT_TRIM,
  exceptionText,
  type HorizonTrim,
  type HorizonRecorderOptions,
  type PrepareOptions,
  type DeletedOptions,
  type FailedOptions,
  type FailedRecord,
} from './HorizonRecorder.js';
export { horizonPrefix, type HorizonPrefixSources } from './prefix.js';
export {
  horizonFacts,
  horizonFactsOf,
  orderedUuid,
  retryPayload,
  withHorizonAdditions,
  type HorizonFacts,
  type HorizonAdditions,
} from './payload.js';
export { horizonTags, horizonType, underlyingClass } from './tags.js';
export { phpFloatString, phpRound2, phpRuntimeText, phpTimeString, systemClock, type Clock } from './clock.js';
export { HorizonSupervisor, masterBasename, type HorizonSupervisorOptions, type SupervisorSettings } from './HorizonSupervisor.js';
export { horizonSnapshot, trimHorizon, type SnapshotOptions, type TrimOptions } from './maintenance.js';
export { installedHorizon, supportsHorizon } from './installed.js';
