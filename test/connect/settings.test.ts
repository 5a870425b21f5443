/**
 * readEnvFile and resolveConnection on .env files a Laravel app may have: a file that is not
 * there, one Laravel would refuse, and a password only quoting keeps whole.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
