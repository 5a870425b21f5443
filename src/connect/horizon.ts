/**
 * Whether a connection writes Laravel Horizon's records, and where: `connect({ horizon })` and
 * `lqb work|dispatch --horizon` resolve it here, the same way. On when asked, off when told
 * `false`, and otherwise on when the app beside the `.env` has a Horizon whose layout this
 * package writes (5.x), as the app's own producers and workers record once Horizon is installed.
 */
import { dirname, resolve } from 'node:path';
import { installedHorizon, supportsHorizon } from '../horizon/installed.js';
import { horizonPrefix } from '../horizon/prefix.js';
import type { HorizonTrim } from '../horizon/HorizonRecorder.js';
import type { LaravelEnv } from './settings.js';
import { ConnectionSettingsError } from './settings.js';

/** `connect({ horizon })`'s object form: Horizon's config/horizon.php settings that its records follow. */
export interface HorizonOptions {
  /** `horizon.prefix`: else HORIZON_PREFIX, else APP_NAME's slug and `_horizon:`. */
  prefix?: string;
  /** `horizon.trim`, in minutes: how long each kind of record is kept (60 and 10080 by default). */
  trim?: Partial<HorizonTrim>;
  /** `horizon.silenced`: job classes kept off the completed list. */
  silenced?: string[];
  /** Whether a worker shows on the dashboard as a supervisor of its own (true). */
  supervisor?: boolean;
}

/** Horizon as resolved: undefined when off. */
export interface ResolvedHorizon {
  prefix: string;
  trim: Partial<HorizonTrim>;
  silenced: string[];
  supervisor: boolean;
  /** Why it is on: asked for, or Horizon found in the app (the version found). */
  why: string;
}

/**
 * Horizon's settings for a connection, or undefined when its records are not written. `given`
 * is the option (true, false, an object, or left out); the environment is the process's, then
 * the `.env`'s.
 */
export function resolveHorizon(
  given: boolean | HorizonOptions | undefined,
  sources: { envPath?: string; fromFile?: LaravelEnv },
): ResolvedHorizon | undefined {
  if (given === false) return undefined;
  let why = 'asked for';
  if (given === undefined) {
    if (sources.envPath === undefined) return undefined;
    const version = installedHorizon(dirname(resolve(sources.envPath)));
    if (version === undefined || !supportsHorizon(version)) return undefined;
    why = `laravel/horizon ${version} is installed beside ${sources.envPath}`;
  }
  const options = typeof given === 'object' ? given : {};
  const problem = horizonOptionsProblem(options);
  if (problem) throw new ConnectionSettingsError(`horizon: ${problem}`);
  const prefix = horizonPrefix({
    ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
    env: (name) => process.env[name] ?? sources.fromFile?.[name],
  });
  return { prefix, trim: options.trim ?? {}, silenced: options.silenced ?? [], supervisor: options.supervisor ?? true, why };
}

function horizonOptionsProblem(options: HorizonOptions): string | undefined {
  if (options.prefix !== undefined && typeof options.prefix !== 'string') return `prefix must be a string, not ${String(options.prefix)}`;
  for (const [name, minutes] of Object.entries(options.trim ?? {}))
    if (!(Number.isInteger(minutes) && minutes >= 0)) return `trim.${name} must be whole minutes, not ${String(minutes)}`;
  if (options.silenced !== undefined && !(Array.isArray(options.silenced) && options.silenced.every((name) => typeof name === 'string')))
    return 'silenced must be a list of class names';
  return undefined;
}

/** Horizon keeps its records on one server: a cluster's slots would split them (Horizon itself refuses a cluster). */
export function horizonClusterProblem(cluster: string[] | undefined): string | undefined {
  return cluster !== undefined && cluster.length > 0
    ? "Horizon's records cannot be written to a Redis Cluster (Horizon does not run on one): leave out --horizon, or horizon: false"
    : undefined;
}
