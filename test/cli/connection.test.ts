/**
 * `--env PATH`: a Laravel `.env` read as Laravel 8.83's default config reads it. The prefix is
 * checked against PHP's own Str::slug; the database and queue by where the jobs land in Redis.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectionFrom, type Connection } from '../../src/cli/connection.js';
import { HANDLERS, UNSHAPED_ONLY, lqb } from '../helpers/processes.js';
import { runPhpScript } from '../helpers/php.js';
import { REDIS_URL } from '../helpers/redis.js';

/** A database the other tests do not use, so a job that lands in 0 instead is seen missing. */
const DB = 7;

let dir: string;
let appName: string;
let prefix: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'lqb-env-'));
  // A name Str::slug has work to do on: capitals, '@', an accent, a dash.
  appName = `Lqb Test@Café-${randomBytes(4).toString('hex')}`;
  prefix = `${JSON.parse(runPhpScript('str-slug.php', JSON.stringify([appName])))[0]}_database_`;
});
afterEach(async () => {
  const raw = new Redis(`${REDIS_URL}/${DB}`);
  const keys = await raw.keys(`${prefix}*`);
  if (keys.length) await raw.del(...keys);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes a .env and returns the --env flag for it. */
function dotenv(lines: string[]): string {
  writeFileSync(join(dir, '.env'), lines.join('\n') + '\n');
  return `--env=${join(dir, '.env')}`;
}

/** The environment of a user's shell: nothing of ours that names Redis or a prefix. */
function shell(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LQB_FAILED_DB: join(dir, 'failed.sqlite'),
    LQB_NODE_RECORD_FILE: join(dir, 'node-runs.jsonl'),
  };
  for (const name of Object.keys(env)) if (/^(REDIS_|APP_|CACHE_PREFIX|QUEUE_NAME)/.test(name)) delete env[name];
  return env;
}

describe('--env', () => {
  it('puts jobs where Laravel would: REDIS_DB without REDIS_HOST, REDIS_QUEUE as the default queue, the APP_NAME prefix', async () => {
    const env = dotenv([`APP_NAME="${appName}"`, `REDIS_DB=${DB}`, 'REDIS_QUEUE=mailq', 'REDIS_PASSWORD=null']);
    const pushed = await lqb(
      ['dispatch', 'App\\Jobs\\Bridge\\RecordJob', '--props={"n":1,"label":"env","ratio":0.5,"items":[]}', env],
      shell(),
    );
    expect(pushed.stderr, 'what lqb dispatch said on standard error').toBe(UNSHAPED_ONLY('App\\Jobs\\Bridge\\RecordJob'));
    expect(JSON.parse(pushed.stdout).queue).toBe('mailq');
    const raw = new Redis(`${REDIS_URL}/${DB}`);
    expect(await raw.llen(`${prefix}queues:mailq`)).toBe(1);
    raw.disconnect();
    expect((await lqb(['size', env], shell())).stdout.trim()).toBe('mailq  1');
    const worked = await lqb(['work', `--handlers=${HANDLERS}`, '--once', '--json', env], shell());
    // The start line of a worker without shapes (unique locks of uniqueId() methods cannot be known) aside.
    const events = worked.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => !String(e.reason ?? '').startsWith('without class shapes'));
    expect(events.map((e) => e.event)).toEqual(['processing', 'processed', 'stopping']);
    expect(JSON.parse(readFileSync(join(dir, 'node-runs.jsonl'), 'utf8'))).toMatchObject({ queue: 'mailq', props: { label: 'env' } });
    await lqb(['dispatch', 'App\\Jobs\\X', env], shell());
    expect((await lqb(['clear', env], shell())).stdout.trim()).toBe('Cleared 1 jobs from the [mailq] queue');
  });

  it('REDIS_PASSWORD and REDIS_DB apply with or without REDIS_HOST and REDIS_PORT; the parts of REDIS_URL win', () => {
    expect(fromDotenv(['REDIS_PASSWORD=s3cr@t', 'REDIS_DB=4']).url).toBe('redis://:s3cr%40t@127.0.0.1:6379/4');
    expect(fromDotenv(['REDIS_HOST=redis.internal', 'REDIS_DB=2']).url).toBe('redis://redis.internal:6379/2');
    expect(fromDotenv(['REDIS_PORT=6380', 'REDIS_PASSWORD=(null)']).url).toBe('redis://127.0.0.1:6380/0');
    expect(fromDotenv(['REDIS_URL=redis://h:1/3', 'REDIS_DB=4', 'REDIS_PASSWORD=p']).url).toBe('redis://:p@h:1/3');
    expect(fromDotenv(['REDIS_URL=redis://h:1', 'REDIS_DB=4']).url).toBe('redis://h:1/4');
    expect(fromDotenv(['REDIS_PASSWORD=p', 'REDIS_CACHE_DB=5']).cacheUrl).toBe('redis://:p@127.0.0.1:6379/5');
    expect(fromDotenv([]).cacheUrl).toBe('redis://127.0.0.1:6379/1');
  });

  it('locks go on the cache store’s lock_connection: `default` (REDIS_DB) in the stock config, `cache` when REDIS_CACHE_LOCK_CONNECTION says so, or --cache-lock-db', () => {
    const stock = fromDotenv(['REDIS_PASSWORD=p', 'REDIS_DB=3', 'REDIS_CACHE_DB=4']);
    expect({ queue: stock.url, values: stock.cacheUrl, locks: stock.lockUrl }, 'the stock skeleton').toEqual({
      queue: 'redis://:p@127.0.0.1:6379/3',
      values: 'redis://:p@127.0.0.1:6379/4',
      locks: 'redis://:p@127.0.0.1:6379/3',
    });
    expect(fromDotenv([]).lockUrl, 'the stock skeleton without REDIS_DB').toBe('redis://127.0.0.1:6379/0');
    expect(fromDotenv(['REDIS_DB=3', 'REDIS_CACHE_DB=4', 'REDIS_CACHE_LOCK_CONNECTION=cache']).lockUrl).toBe('redis://127.0.0.1:6379/4');
    expect(
      fromDotenv(['REDIS_DB=3', 'REDIS_CACHE_CONNECTION=default']).cacheUrl,
      'REDIS_CACHE_CONNECTION=default keeps values on the queue’s database',
    ).toBe('redis://127.0.0.1:6379/3');
    expect(fromDotenv(['REDIS_DB=3'], { 'cache-lock-db': '6' }).lockUrl).toBe('redis://127.0.0.1:6379/6');
    expect(() => fromDotenv(['REDIS_CACHE_LOCK_CONNECTION=sessions'])).toThrow(
      /^REDIS_CACHE_LOCK_CONNECTION="sessions" names a Redis connection the stock config\/database.php does not have \(default or cache\): give its database with --cache-lock-db$/,
    );
    expect(() => fromDotenv([], { 'cache-lock-db': 'x' })).toThrow(
      /the lock database \(--cache-lock-db, LQB_CACHE_LOCK_DB\) must be a whole number, not "x"/,
    );
  });

  it('without --env, locks stay on the queue’s connection (what `default` means), whatever database the cache values are given', () => {
    const settings = connectionFrom({ redis: 'redis://127.0.0.1:6379/2', 'cache-db': '5' });
    expect({ values: settings.cacheUrl, locks: settings.lockUrl }).toEqual({
      values: 'redis://127.0.0.1:6379/5',
      locks: 'redis://127.0.0.1:6379/2',
    });
  });

  it('a Redis database that is no whole number is refused at once, naming the setting (ioredis would SELECT NaN, and fail later, unhandled)', () => {
    expect(() => fromDotenv(['REDIS_DB=abc'])).toThrow(
      /the database of "redis:\/\/127\.0\.0\.1:6379\/abc" must be a whole number, not "abc"/,
    );
    expect(() => fromDotenv(['REDIS_CACHE_DB=one'])).toThrow(/must be a whole number, not "one"/);
    expect(() => fromDotenv(['REDIS_URL=redis://:pw@h:1/x'])).toThrow(/the database of "redis:\/\/:\*\*\*@h:1\/x"/);
  });

  it("a SQLite failed-jobs database is the app's: relative paths from the .env's folder, wherever lqb runs", () => {
    const before = process.env;
    process.env = shell();
    delete process.env.LQB_FAILED_DB;
    try {
      const failedDb = (lines: string[]) => connectionFrom({ env: dotenv(lines).slice('--env='.length) }).failedDb;
      // Laravel's default: database_path('database.sqlite').
      expect(failedDb(['DB_CONNECTION=sqlite'])).toBe(`sqlite://${join(dir, 'database', 'database.sqlite')}`);
      expect(failedDb(['DB_CONNECTION=sqlite', 'DB_DATABASE=storage/jobs.sqlite'])).toBe(`sqlite://${join(dir, 'storage', 'jobs.sqlite')}`);
      expect(failedDb(['DB_CONNECTION=sqlite', 'DB_DATABASE=/var/db/x.sqlite'])).toBe('sqlite:///var/db/x.sqlite');
    } finally {
      process.env = before;
    }
  });

  it('the cache prefix is Str::slug(APP_NAME) too, as restart signals it', () => {
    expect(fromDotenv([`APP_NAME="${appName}"`]).cachePrefix).toBe(prefix.replace(/_database_$/, '_cache'));
  });
});

describe('--env: the prefixes of the app’s Laravel version', () => {
  const hyphenSlug = () => JSON.parse(runPhpScript('str-slug.php', JSON.stringify([appName]), ['-']))[0] as string;
  const underscoreSlug = () => prefix.replace(/_database_$/, '');
  const app = (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
  };
  const installed = (version: string) => JSON.stringify({ packages: [{ name: 'laravel/framework', version }] });

  it('an app whose config/cache.php is the 12.2+ skeleton’s: {slug}-database-, {slug}-cache-, no colon', () => {
    app({
      'config/cache.php': "<?php return ['prefix' => env('CACHE_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-cache-')];",
      'vendor/composer/installed.json': installed('v12.40.1'),
    });
    const c = fromDotenv([`APP_NAME="${appName}"`]);
    expect([c.prefix, c.cachePrefix, c.cacheSeparator]).toEqual([`${hyphenSlug()}-database-`, `${hyphenSlug()}-cache-`, '']);
  });

  it('an 11 or 12 app without its own config: the framework’s {slug}_cache_, no colon; a 13 app: hyphens', () => {
    app({ 'vendor/composer/installed.json': installed('v12.10.0') });
    let c = fromDotenv([`APP_NAME="${appName}"`]);
    expect([c.prefix, c.cachePrefix, c.cacheSeparator]).toEqual([`${underscoreSlug()}_database_`, `${underscoreSlug()}_cache_`, '']);
    app({ 'vendor/composer/installed.json': installed('v13.26.1') });
    c = fromDotenv([`APP_NAME="${appName}"`]);
    expect([c.prefix, c.cachePrefix, c.cacheSeparator]).toEqual([`${hyphenSlug()}-database-`, `${hyphenSlug()}-cache-`, '']);
  });

  it('a 12 app whose config/database.php is the skeleton’s since its hyphenated prefixes, without config/cache.php: {slug}-database-', () => {
    app({
      'config/database.php':
        "<?php return ['redis' => ['options' => ['prefix' => env('REDIS_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-database-')]]];",
      'vendor/composer/installed.json': installed('v12.67.0'),
    });
    const c = fromDotenv([`APP_NAME="${appName}"`]);
    expect(c.prefix, 'the queue prefix config/database.php gives').toBe(`${hyphenSlug()}-database-`);
  });

  it('a 12 app whose config/database.php is the earlier 12 skeleton’s, beside a hyphenated config/cache.php: each file says its own prefix', () => {
    app({
      'config/database.php':
        "<?php return ['redis' => ['options' => ['prefix' => env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_')]]];",
      'config/cache.php': "<?php return ['prefix' => env('CACHE_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-cache-')];",
      'vendor/composer/installed.json': installed('v12.67.0'),
    });
    const c = fromDotenv([`APP_NAME="${appName}"`]);
    expect([c.prefix, c.cachePrefix], 'the queue and cache prefixes').toEqual([`${underscoreSlug()}_database_`, `${hyphenSlug()}-cache-`]);
  });

  it('--laravel says the version when nothing beside the .env does; 8–10 keep {slug}_cache and the colon', () => {
    const c13 = fromDotenv([`APP_NAME="${appName}"`], { laravel: '13' });
    expect(c13.cachePrefix).toBe(`${hyphenSlug()}-cache-`);
    const c10 = fromDotenv([`APP_NAME="${appName}"`], { laravel: '10.48.0' });
    expect([c10.prefix, c10.cachePrefix, c10.cacheSeparator]).toEqual([prefix, `${underscoreSlug()}_cache`, ':']);
  });

  it('REDIS_PREFIX and CACHE_PREFIX still win', () => {
    app({ 'vendor/composer/installed.json': installed('v13.0.0') });
    const c = fromDotenv([`APP_NAME="${appName}"`, 'REDIS_PREFIX=mine_', 'CACHE_PREFIX=cache_']);
    expect([c.prefix, c.cachePrefix]).toEqual(['mine_', 'cache_']);
  });
});

/** connectionFrom for a .env of these lines, in a shell that sets nothing else. */
function fromDotenv(lines: string[], flags: Record<string, string> = {}): Connection {
  const before = process.env;
  process.env = shell();
  try {
    return connectionFrom({ ...flags, env: dotenv(lines).slice('--env='.length) });
  } finally {
    process.env = before;
  }
}
