/**
 * Finding Horizon in an app as Composer installed it (vendor/composer/installed.json, in
 * Composer 2's form and Composer 1's), so that --env can turn Horizon's records on.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { installedHorizon, supportsHorizon } from '../../src/horizon/index.js';

const dirs: string[] = [];
function app(installed: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-horizon-app-'));
  dirs.push(dir);
  if (installed !== undefined) {
    mkdirSync(join(dir, 'vendor/composer'), { recursive: true });
    writeFileSync(join(dir, 'vendor/composer/installed.json'), typeof installed === 'string' ? installed : JSON.stringify(installed));
  }
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('installedHorizon', () => {
  it("reads Horizon's version from Composer 2's and Composer 1's installed.json", () => {
    const packages = [
      { name: 'laravel/framework', version: 'v8.83.26' },
      { name: 'laravel/horizon', version: 'v5.22.1' },
    ];
    expect(installedHorizon(app({ packages }))).toBe('v5.22.1');
    expect(installedHorizon(app(packages))).toBe('v5.22.1');
  });

  it('is undefined for an app without Horizon, without vendor/, or with an unreadable file', () => {
    expect(installedHorizon(app({ packages: [{ name: 'laravel/framework', version: 'v8.83.26' }] }))).toBeUndefined();
    expect(installedHorizon(app(undefined))).toBeUndefined();
    expect(installedHorizon(app('{not json'))).toBeUndefined();
  });

  it('takes the 5.x line, whose records this package writes', () => {
    expect(supportsHorizon('v5.22.1')).toBe(true);
    expect(supportsHorizon('5.29.0')).toBe(true);
    expect(supportsHorizon('v4.3.5')).toBe(false);
    expect(supportsHorizon('v6.0.0')).toBe(false);
  });
});
