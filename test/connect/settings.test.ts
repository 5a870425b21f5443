/**
 * readEnvFile and resolveConnection on .env files a Laravel app may have: a file that is not
 * there, one Laravel would refuse, and a password only quoting keeps whole.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConnectionSettingsError, readEnvFile, resolveConnection } from '../../src/connect/settings.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readEnvFile', () => {
  it('a .env that is not there: a ConnectionSettingsError naming its full path', () => {
    const missing = join(dir, 'app/.env');
    expect(() => readEnvFile(missing), 'a missing .env is not a settings error').toThrow(ConnectionSettingsError);
    expect(() => readEnvFile(missing), 'the error does not name the file').toThrow(`cannot read the .env file ${missing}: there is no such file`);
  });

  it('a .env Laravel would refuse: names the file and the variable, not the value', () => {
    const file = join(dir, 'refused.env');
    writeFileSync(file, 'APP_NAME=Shop\nREDIS_PASSWORD=two words\n');
    expect(() => readEnvFile(file), 'the error does not name the file and variable').toThrow(new RegExp(`^${file} is not a .env Laravel can read: REDIS_PASSWORD's value`));
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
});
