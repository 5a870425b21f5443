/**
 * readEnvFile and resolveConnection on .env files a Laravel app may have: a file that is not
 * there, one Laravel would refuse, and a password only quoting keeps whole.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionSettingsError, readEnvFile, resolveConnection } from '../../src/connect/settings.js';
import { php } from '../helpers/php.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readEnvFile', () => {
  it('a .env that is not there: a ConnectionSettingsError naming its full path', () => {
    const missing = join(dir, 'app/.env');
    expect(() => readEnvFile(missing), 'a missing .env is not a settings error').toThrow(ConnectionSettingsError);
    expect(() => readEnvFile(missing), 'the error does not name the file').toThrow(
      `cannot read the .env file ${missing}: there is no such file`,
    );
  });

  it('a .env Laravel would refuse: names the file and the variable, not the value', () => {
    const file = join(dir, 'refused.env');
    writeFileSync(file, 'APP_NAME=Shop\nREDIS_PASSWORD=two words\n');
    expect(() => readEnvFile(file), 'the error does not name the file and variable').toThrow(
      new RegExp(`^${file} is not a .env Laravel can read: REDIS_PASSWORD's value`),
    );
    expect(() => readEnvFile(file), 'the error shows the password').not.toThrow(/two words/);
  });
});

describe('resolveConnection({ env })', () => {
  it('a single-quoted REDIS_PASSWORD with $, #, spaces and quotes reaches Redis as written', () => {
    const file = join(dir, 'password.env');
    const password = 'p@ss w#rd ${APP_NAME} "q"';
    writeFileSync(file, `APP_NAME=Shop\nREDIS_PASSWORD='${password}'\n`);
    const settings = resolveConnection({ env: file });
    expect(decodeURIComponent(new URL(settings.url).password), 'the password in the Redis URL is not the .env’s').toBe(password);
    expect(settings.prefix, 'APP_NAME did not make the prefix').toBe('shop_database_');
  });

  it('REDIS_URL as Laravel 8.83’s ConfigurationUrlParser reads it for the default and cache connections: the query’s database wins, then the path, then REDIS_DB / REDIS_CACHE_DB', () => {
    const urls = [
      'redis://:se%40cret@redis.example:6380?database=3',
      'redis://redis.example:6380/5?database=4',
      'redis://redis.example/2',
      'redis://redis.example:6390',
    ];
    for (const redisUrl of urls) {
      const file = join(dir, 'url.env');
      writeFileSync(file, `APP_NAME=Shop\nREDIS_URL=${redisUrl}\nREDIS_HOST=127.0.0.1\nREDIS_PASSWORD=fallback\n`);
      const settings = resolveConnection({ env: file });
      // config/database.php's two connections of the 8.x skeleton, through Laravel's own parser.
      const laravel = JSON.parse(
        php(
          `require 'Illuminate/autoload.php'; $p = new Illuminate\\Support\\ConfigurationUrlParser; $c = fn ($db) => $p->parseConfiguration(['url' => ${JSON.stringify(redisUrl)}, 'host' => '127.0.0.1', 'password' => 'fallback', 'port' => '6379', 'database' => $db]); echo json_encode(['default' => $c('0'), 'cache' => $c('1')]);`,
        ).toString(),
      ) as Record<'default' | 'cache', { host: string; port: number | string; password: string; database: number | string }>;
      const node = (url: string) => {
        const parsed = new URL(url);
        return {
          host: parsed.hostname,
          port: String(parsed.port),
          password: decodeURIComponent(parsed.password),
          database: parsed.pathname.slice(1),
        };
      };
      const php8 = (c: (typeof laravel)['default']) => ({
        host: c.host,
        port: String(c.port),
        password: c.password,
        database: String(c.database),
      });
      expect(
        { default: node(settings.url), cache: node(settings.cacheUrl), lock: node(settings.lockUrl) },
        `REDIS_URL=${redisUrl}`,
      ).toEqual({ default: php8(laravel.default), cache: php8(laravel.cache), lock: php8(laravel.default) });
    }
  });
});

describe('resolveConnection: the queue connection', () => {
  it('a Laravel 11 skeleton .env (QUEUE_CONNECTION=database, DB_CONNECTION=sqlite): the database connection on the app’s SQLite file, no Redis named', () => {
    const app = join(dir, 'skeleton11');
    const file = join(app, '.env');
    mkdirSync(app, { recursive: true });
    writeFileSync(file, 'APP_NAME=Shop\nDB_CONNECTION=sqlite\nQUEUE_CONNECTION=database\nCACHE_STORE=database\nREDIS_HOST=127.0.0.1\n');
    const settings = resolveConnection({ env: file });
    expect(settings.queueConnection, 'the queue connection').toBe('database');
    expect(settings.queueDb, 'the queue database: Laravel’s database_path("database.sqlite")').toBe(
      `sqlite://${join(app, 'database/database.sqlite')}`,
    );
    expect(settings.jobsTable, 'the jobs table').toBe('jobs');
    expect(settings.defaultQueue, 'the connection’s own queue').toBe('default');
    expect(settings.redisNamed, 'a skeleton’s REDIS_HOST alone names no Redis the app uses').toBe(false);
  });

  it('DB_QUEUE and DB_QUEUE_TABLE (11+) name the database connection’s queue and table; REDIS_QUEUE does not', () => {
    const file = join(dir, 'db-queue.env');
    writeFileSync(
      file,
      'DB_CONNECTION=pgsql\nDB_DATABASE=shop\nDB_USERNAME=app\nDB_PASSWORD=s3cret\nQUEUE_CONNECTION=database\nDB_QUEUE=orders\nDB_QUEUE_TABLE=queue_jobs\nREDIS_QUEUE=other\n',
    );
    const settings = resolveConnection({ env: file });
    expect(settings.defaultQueue, 'the database connection’s queue').toBe('orders');
    expect(settings.jobsTable, 'the jobs table').toBe('queue_jobs');
    expect(settings.queueDb, 'the queue database').toBe('postgres://app:s3cret@127.0.0.1:5432/shop');
  });

  it('flags win: connection, queue database and table as given; redis given is named', () => {
    const settings = resolveConnection({
      connection: 'database',
      queueDb: 'mysql://root@127.0.0.1:3306/test',
      jobsTable: 'jobs2',
      redis: 'redis://127.0.0.1:6379',
    });
    expect(
      [settings.queueConnection, settings.queueDb, settings.jobsTable, settings.redisNamed],
      'connection, database, table, Redis named',
    ).toEqual(['database', 'mysql://root@127.0.0.1:3306/test', 'jobs2', true]);
    expect(resolveConnection({}).queueConnection, 'the connection with nothing said').toBe('redis');
  });

  it('a connection Node does not speak is refused in one line naming where it came from', () => {
    expect(() => resolveConnection({ connection: 'sqs' }), 'the sqs connection given').toThrow(
      new ConnectionSettingsError(`the connection given is "sqs": Node speaks Laravel's redis and database queue connections`),
    );
    const file = join(dir, 'beanstalk.env');
    writeFileSync(file, 'QUEUE_CONNECTION=beanstalkd\n');
    expect(() => resolveConnection({ env: file }), 'QUEUE_CONNECTION=beanstalkd').toThrow(/^QUEUE_CONNECTION is "beanstalkd"/);
  });
});
