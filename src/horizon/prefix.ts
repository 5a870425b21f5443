/**
 * Where Horizon keeps its records: `config('horizon.prefix')`, which the shipped config reads as
 * `env('HORIZON_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_horizon:')`. The keys go
 * on the connection `horizon.use` names with this prefix alone: Horizon copies that connection
 * and replaces the app's Redis prefix with its own.
 */
import { slug } from '../connect/slug.js';

export interface HorizonPrefixSources {
  /** `--horizon-prefix` or the library's `horizon.prefix`: wins over the environment. */
  prefix?: string;
  /** The variables as the app sees them (the process's, then its .env's), read as Laravel's env() reads them. */
  env?: (name: string) => string | undefined;
}

/**
 * The prefix Horizon's records are under: the one given, else HORIZON_PREFIX, else APP_NAME's;
 * an empty one (or "0", which PHP takes as false) is `horizon:`, as Horizon::use() makes it.
 */
export function horizonPrefix(sources: HorizonPrefixSources = {}): string {
  const configured = configuredPrefix(sources);
  return configured === '' || configured === '0' ? 'horizon:' : configured;
}

/** config('horizon.prefix') as the shipped config/horizon.php reads it ('' for PHP's null). */
function configuredPrefix(sources: HorizonPrefixSources): string {
  if (sources.prefix !== undefined) return sources.prefix;
  const env = (name: string) => laravelEnvValue(sources.env?.(name));
  const given = sources.env?.('HORIZON_PREFIX');
  // env('HORIZON_PREFIX', …) falls back only when the variable is not set at all; a value of
  // "null" is set, and gives a null prefix.
  if (given !== undefined) return env('HORIZON_PREFIX') ?? '';
  // Likewise APP_NAME: unset is 'laravel', "null" is a null name, which slug makes ''.
  const appName = sources.env?.('APP_NAME') === undefined ? 'laravel' : (env('APP_NAME') ?? '');
  return `${slug(appName, '_')}_horizon:`;
}

/** A value as Laravel's env() reads it: "null" and "(null)" are no value, "empty" and "(empty)" the empty string. */
function laravelEnvValue(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  if (lower === 'null' || lower === '(null)') return undefined;
  return lower === 'empty' || lower === '(empty)' ? '' : value;
}
