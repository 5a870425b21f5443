/**
 * What a Node worker keeps of the jobs it ran (per-minute counts and runtimes, the latest
 * completed jobs, its heartbeat), for the dashboard: NodeRecord.ts has the layout and why,
 * recorder.ts the worker's side, view.ts the reader.
 */
export {
  RECORD_KEYS,
  RECORD_TABLES,
  RECORD_KEY_PATTERN,
  RECORD_DEFAULTS,
  HEARTBEATS_MISSED,
  isLive,
  recordOptionsProblem,
  resolveRecordOptions,
  type RecordOptions,
  type RecordOutcome,
  type MinuteRow,
  type CompletedJob,
  type WorkerHeartbeat,
} from './NodeRecord.js';
export { nodeRecorder, NodeRecorder, type RecorderDetails } from './recorder.js';
export { nodeRecordView, type NodeRecordView } from './view.js';
export { RedisRecord } from './RedisRecord.js';
export { DatabaseRecord } from './DatabaseRecord.js';
export { recordStore, type RecordSource, type RecordStore, type RecordBatch, type MinuteCount } from './store.js';
