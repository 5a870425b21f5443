/**
 * The key of a unique job's lock per Laravel version (src/worker/locks/uniqueKeys.ts), without
 * Laravel running: 8.83 is proven end to end in test/e2e/unique-locks.test.ts; the other versions
 * by the key each writes (read from their UniqueLock sources), with PHP's own hash('xxh128') for 12.54+.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { uniqueLockKeys, xxh128 } from '../../../src/worker/index.js';
import { uniqueLockKeysNow } from '../../../src/worker/locks/uniqueKeys.js';

const CLASS = 'App\\Jobs\\SyncUser';

describe('the lock key each version writes', () => {
  it('8.67 to 10: class then uniqueId, no separator; 11+: a colon between', async () => {
    expect(await uniqueLockKeys(CLASS, '42', [8, 83], '8', undefined)).toEqual([`laravel_unique_job:${CLASS}42`]);
    expect(await uniqueLockKeys(CLASS, '42', [10, 48], '9', undefined)).toEqual([`laravel_unique_job:${CLASS}42`]);
    expect(await uniqueLockKeys(CLASS, '42', [11, 0], '8', undefined)).toEqual([`laravel_unique_job:${CLASS}:42`]);
    expect(await uniqueLockKeys(CLASS, '', [11, 20], '11', undefined)).toEqual([`laravel_unique_job:${CLASS}:`]);
    expect(await uniqueLockKeys(CLASS, '42', [8, 66], '8', undefined), 'no unique jobs before 8.67').toEqual([]);
  });

  it('12.41+: displayName() when the class defines it; 12.54+: its xxh128, as PHP’s hash() makes it', async () => {
    expect(await uniqueLockKeys(CLASS, '7', [12, 40], '12', 'Sync user 7')).toEqual([`laravel_unique_job:${CLASS}:7`]);
    expect(await uniqueLockKeys(CLASS, '7', [12, 41], '12', 'Sync user 7')).toEqual(['laravel_unique_job:Sync user 7:7']);
    const hashed = execFileSync('php', ['-r', 'echo hash("xxh128", "Sync user 7");'], { encoding: 'utf8' });
    expect(await xxh128('Sync user 7')).toBe(hashed);
    expect(await uniqueLockKeys(CLASS, '7', [13, 2], '12', 'Sync user 7')).toEqual([`laravel_unique_job:${hashed}:7`]);
    expect(await uniqueLockKeys(CLASS, '7', [12, 60], '12', undefined), 'no displayName(): the class').toEqual([
      `laravel_unique_job:${CLASS}:7`,
    ]);
  });

  it('without a version, every spelling the payload’s profile allows', async () => {
    expect(await uniqueLockKeys(CLASS, '1', null, '8', undefined)).toEqual([
      `laravel_unique_job:${CLASS}1`,
      `laravel_unique_job:${CLASS}:1`,
    ]);
    expect(await uniqueLockKeys(CLASS, '1', null, '11', undefined)).toEqual([`laravel_unique_job:${CLASS}:1`]);
    expect(await uniqueLockKeys(CLASS, '1', null, '12', 'Named')).toEqual([
      `laravel_unique_job:${CLASS}:1`,
      'laravel_unique_job:Named:1',
      `laravel_unique_job:${await xxh128('Named')}:1`,
    ]);
    expect(await uniqueLockKeys(CLASS, '1', null, '7', undefined)).toEqual([]);
  });

  it('at once (uniqueLockKeysNow) the same keys, but for a hash not worked out yet, which it leaves to uniqueLockKeys', async () => {
    const name = `Never hashed before ${process.pid}`;
    expect(uniqueLockKeysNow(CLASS, '1', null, '8', undefined)).toEqual(await uniqueLockKeys(CLASS, '1', null, '8', undefined));
    expect(uniqueLockKeysNow(CLASS, '1', [12, 45], '12', name), '12.41–12.53 name it by displayName: no hash').toEqual([
      `laravel_unique_job:${name}:1`,
    ]);
    expect(uniqueLockKeysNow(CLASS, '1', [12, 54], '12', name), 'its hash not known yet').toBeUndefined();
    expect(uniqueLockKeysNow(CLASS, '1', null, '13', name), 'its hash not known yet').toBeUndefined();
    const keys = await uniqueLockKeys(CLASS, '1', null, '13', name);
    expect(uniqueLockKeysNow(CLASS, '1', null, '13', name), 'the hash remembered').toEqual(keys);
    expect(uniqueLockKeysNow(CLASS, '1', [12, 54], '12', name)).toEqual([`laravel_unique_job:${await xxh128(name)}:1`]);
  });
});
