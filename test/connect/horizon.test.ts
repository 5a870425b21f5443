/**
 * Whether a connection writes Horizon's records (connect({ horizon }), lqb --horizon): asked for,
 * refused, or found in the app beside the .env as Composer installed it; the prefix from the
 * option, else HORIZON_PREFIX, else APP_NAME (the process's environment first, then the .env's).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveHorizon } from '../../src/connect/horizon.js';
import { readEnvFile } from '../../src/connect/settings.js';

const dirs: string[] = [];
/** An app directory with a .env and, when given, Composer's installed.json listing Horizon at that version. */
function app(env: string, horizon?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-horizon-resolve-'));
  dirs.push(dir);
  writeFileSync(join(dir, '.env'), env);
  if (horizon !== undefined) {
    mkdirSync(join(dir, 'vendor/composer'), { recursive: true });
    writeFileSync(
      join(dir, 'vendor/composer/installed.json'),
      JSON.stringify({ packages: [{ name: 'laravel/horizon', version: horizon }] }),
    );
  }
  return join(dir, '.env');
}
const sources = (envPath: string) => ({ envPath, fromFile: readEnvFile(envPath) });

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('resolveHorizon', () => {
  const saved = { HORIZON_PREFIX: process.env.HORIZON_PREFIX, APP_NAME: process.env.APP_NAME };
  afterAll(() => {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  });
  delete process.env.HORIZON_PREFIX;
  delete process.env.APP_NAME;

  it('is on by itself for an app with Horizon 5, under its APP_NAME’s prefix, and says why', () => {
    const env = app('APP_NAME="My Shop"\n', 'v5.22.1');
    const resolved = resolveHorizon(undefined, sources(env));
    expect(resolved?.prefix).toBe('my_shop_horizon:');
    expect(resolved?.why).toBe(`laravel/horizon v5.22.1 is installed beside ${env}`);
    expect(resolved?.supervisor).toBe(true);
  });

  it('is off when not asked and the app has no Horizon, or a major it does not write; off when told false', () => {
    expect(resolveHorizon(undefined, sources(app('APP_NAME=Shop\n')))).toBeUndefined();
    expect(resolveHorizon(undefined, sources(app('APP_NAME=Shop\n', 'v4.3.5')))).toBeUndefined();
    expect(resolveHorizon(undefined, {})).toBeUndefined();
    expect(resolveHorizon(false, sources(app('APP_NAME=Shop\n', 'v5.22.1')))).toBeUndefined();
  });

  it('when asked: the option’s prefix, else HORIZON_PREFIX, else APP_NAME’s', () => {
    const env = app('APP_NAME=Shop\nHORIZON_PREFIX=shop-h:\n');
    expect(resolveHorizon({ prefix: 'given:' }, sources(env))?.prefix).toBe('given:');
    expect(resolveHorizon(true, sources(env))?.prefix).toBe('shop-h:');
    expect(resolveHorizon(true, sources(app('APP_NAME=Shop\n')))?.prefix).toBe('shop_horizon:');
    expect(resolveHorizon(true, {})?.prefix).toBe('laravel_horizon:');
  });

  it('refuses settings Horizon would not take, naming them', () => {
    expect(() => resolveHorizon({ trim: { completed: -1 } }, {})).toThrow('horizon: trim.completed must be whole minutes, not -1');
    expect(() => resolveHorizon({ silenced: 'App\\Jobs\\A' as unknown as string[] }, {})).toThrow(
      'horizon: silenced must be a list of class names',
    );
  });
});
