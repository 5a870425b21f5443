/**
 * Where `lqb` finds Redis, the key prefix, the APP_KEY and the failed-jobs database: flags
 * first, then the environment, then a Laravel `.env` read as Laravel's default config reads it.
 */
import { readFileSync } from 'node:fs';
import { parse as parseDotenv } from 'dotenv';

export interface LaravelEnv {
  [key: string]: string | undefined;
}

/** Reads a Laravel `.env` file; `${VAR}` references are expanded as Laravel's dotenv does. */
export function readEnvFile(path: string): LaravelEnv {
  const raw = parseDotenv(readFileSync(path));
  const expanded: LaravelEnv = {};
  for (const [key, value] of Object.entries(raw)) {
    expanded[key] = value.replace(/\$\{([A-Z0-9_]+)\}/gi, (_, name: string) => expanded[name] ?? raw[name] ?? process.env[name] ?? '');
  }
  return expanded;
}

/** Laravel's default cache/redis prefix: Str::slug(APP_NAME, '_').'_database_'. */
export function laravelRedisPrefix(env: LaravelEnv): string {
  if (env.REDIS_PREFIX !== undefined) return env.REDIS_PREFIX;
  const slug = (env.APP_NAME ?? 'laravel')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9\s_-]+/g, '')
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '_');
  return `${slug}_database_`;
}

export interface AppKeySettings {
  appKey?: string;
  cipher?: string;
}

/** The APP_KEY (and cipher) for encrypted jobs: --key, else LARAVEL_APP_KEY/APP_KEY, else the .env. */
export function appKeyFrom(values: { key?: unknown; cipher?: unknown; env?: unknown }): AppKeySettings {
  const env = typeof values.env === 'string' ? readEnvFile(values.env) : {};
  const appKey = (typeof values.key === 'string' ? values.key : undefined) ?? process.env.APP_KEY ?? env.APP_KEY;
  const cipher = (typeof values.cipher === 'string' ? values.cipher : undefined) ?? env.APP_CIPHER ?? 'AES-256-CBC';
  return { appKey, cipher };
}
