/**
 * `lqb horizon:snapshot` on the records Horizon 5.22.1 left at the end of the fixtures'
 * scenario: the snapshot is stored once per lock, the lists are trimmed by the --trim-* flags,
 * and the prefix comes from --horizon-prefix, else HORIZON_PREFIX, else APP_NAME in --env's file.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lqb } from '../helpers/processes.js';
import { REDIS_URL, rawClient, removePrefix } from '../helpers/redis.js';
import { loadState, movedToNow, readHorizonFixtures } from '../horizon/fixtures.js';

const raw = rawClient();
const label = randomBytes(4).toString('hex');
const final = readHorizonFixtures()
  .at(-1)!
  .after.filter((k) => k.key.startsWith('laravel_horizon:'));
const dir = mkdtempSync(join(tmpdir(), 'lqb-horizon-cli-'));
const env = { ...process.env, REDIS_URL, HORIZON_PREFIX: undefined, APP_NAME: undefined };

afterAll(async () => {
  await removePrefix(raw, `lqb-cli-${label}`);
  await removePrefix(raw, `lqb_cli_${label}`);
  raw.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('lqb horizon:snapshot', () => {
  it('stores the metrics snapshot once per lock and trims the lists by the flags', async () => {
    const prefix = `lqb-cli-${label}-horizon:`;
    // Its lists' times moved to a minute ago: the trims below count from now, and the fixtures aged.
    await loadState(raw, movedToNow(final, Date.now() / 1000 - 60), `lqb-cli-${label}-database_`, prefix);
    const first = await lqb(['horizon:snapshot', `--horizon-prefix=${prefix}`, '--trim-recent=0', '--trim-pending=0'], env);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout.split('\n')[0]).toBe('Metrics snapshot stored successfully.');
    expect(await raw.zcard(`${prefix}snapshot:queue:default`), 'a point for the queue').toBe(1);
    expect(await raw.exists(`${prefix}queue:default`), 'its counters start again').toBe(0);
    expect(await raw.zcard(`${prefix}recent_jobs`), 'recent: 0 minutes').toBe(0);
    expect(await raw.zcard(`${prefix}pending_jobs`), 'pending: 0 minutes').toBe(0);
    expect(await raw.zcard(`${prefix}failed_jobs`), 'failed: a week by default').toBe(1);
    const second = await lqb(['horizon:snapshot', `--horizon-prefix=${prefix}`], env);
    expect(second.stdout.split('\n')[0]).toBe('Metrics snapshot skipped: another snapshot was taken within the lock.');
    expect(await raw.zcard(`${prefix}snapshot:queue:default`), 'still one point').toBe(1);
  });

  it("finds Horizon's prefix from APP_NAME in --env's file, and from HORIZON_PREFIX over it", async () => {
    const file = join(dir, '.env');
    writeFileSync(file, `APP_NAME="lqb cli ${label}"\nREDIS_HOST=127.0.0.1\n`);
    await raw.hset(`lqb_cli_${label}_horizon:queue:default`, { throughput: '1', runtime: '2' });
    await raw.sadd(`lqb_cli_${label}_horizon:measured_queues`, `lqb_cli_${label}_horizon:queue:default`);
    const result = await lqb(['horizon:snapshot', `--env=${file}`, `--redis=${REDIS_URL}`], env);
    expect(result.stderr).toBe('');
    expect(await raw.zcard(`lqb_cli_${label}_horizon:snapshot:queue:default`), 'the snapshot under APP_NAME’s prefix').toBe(1);
    const bad = await lqb(['horizon:snapshot', `--env=${file}`, '--trim-failed=soon'], {
      ...env,
      HORIZON_PREFIX: `lqb-cli-${label}-other:`,
    });
    expect(bad.status, 'a trim that is not minutes').toBe(2);
    expect(bad.stderr).toContain('--trim-failed takes whole minutes, not "soon"');
  });
});
