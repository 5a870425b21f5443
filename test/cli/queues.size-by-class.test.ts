/**
 * `lqb size --by-class` (and RedisQueue.countByClass beneath it): a queue's jobs counted per class
 * and state, in pages, without taking anything; with --handlers, whether a Node worker with them
 * takes each class or leaves it to PHP.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { lqb, scratchPerTest } from '../helpers/processes.js';
import { REDIS_URL, prefixedClient, rawClient } from '../helpers/redis.js';
import { connect } from '../../src/connect/index.js';

const current = scratchPerTest('by-class');
const NODE = 'App\\Jobs\\Moved';
const PHP = 'App\\Jobs\\StillPhp';
const job = (className: string, n: number) => buildPayload(buildJob({ className, properties: { n }, serializesModels: false })).raw;

/** 1,200 PHP jobs and 3 Node jobs ready (more than two pages), 2 Node jobs delayed, 1 reserved. */
async function fill(): Promise<void> {
  const client = prefixedClient(current.prefix);
  try {
    const queue = new RedisQueue(client, { defaultQueue: 'mail' });
    await queue.bulkRaw([...Array.from({ length: 1200 }, (_, n) => job(PHP, n)), job(NODE, 1), job(NODE, 2), job(NODE, 3), job(NODE, 4)]);
    await queue.laterRaw(60, job(NODE, 5));
    await queue.laterRaw(60, job(NODE, 6));
    expect((await queue.popMany('mail', 1, { classes: [NODE] })).length, 'no Node job was reserved').toBe(1);
  } finally {
    client.disconnect();
  }
}

describe('lqb size --by-class', () => {
  it('counts each class by state across pages, and says which a worker with --handlers takes, leaving the queue as it was', async () => {
    await fill();
    const raw = rawClient();
    const key = `${current.prefix}queues:mail`;
    const before = [await raw.lrange(key, 0, -1), await raw.zrange(`${key}:delayed`, 0, -1), await raw.zrange(`${key}:reserved`, 0, -1)];
    const handlers = join(current.s.dir, 'moved.mjs');
    writeFileSync(handlers, `export default { 'App\\\\Jobs\\\\Moved': async () => {} };\n`);
    const text = await lqb(['size', '--queue=mail', '--by-class', `--handlers=${handlers}`], current.s.env);
    expect([text.status, text.stderr], 'lqb size --by-class failed').toEqual([0, '']);
    expect(text.stdout, 'the text lines').toBe(
      [
        'mail  1206',
        `  ${PHP}  ready 1200, delayed 0, reserved 0  left to PHP`,
        `  ${NODE.padEnd(PHP.length)}  ready 3, delayed 2, reserved 1  Node takes it`,
        '',
      ].join('\n'),
    );
    const json = await lqb(['size', '--queue=mail', '--by-class', '--json'], current.s.env);
    expect(
      json.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
      'the JSON lines (no --handlers: no taken)',
    ).toEqual([
      { queue: 'mail', class: PHP, ready: 1200, delayed: 0, reserved: 0 },
      { queue: 'mail', class: NODE, ready: 3, delayed: 2, reserved: 1 },
    ]);
    const after = [await raw.lrange(key, 0, -1), await raw.zrange(`${key}:delayed`, 0, -1), await raw.zrange(`${key}:reserved`, 0, -1)];
    raw.disconnect();
    expect(after, 'counting changed the queue').toEqual(before);
    const misuse = await lqb(['size', `--handlers=${handlers}`], current.s.env);
    expect([misuse.status, misuse.stderr.trim()], '--handlers without --by-class was not a usage error').toEqual([
      2,
      expect.stringContaining('--handlers goes with --by-class'),
    ]);
  });

  it('connect()’s sizeByClass gives the library the same counts', async () => {
    await fill();
    const queue = await connect({ redis: REDIS_URL, prefix: current.prefix, failedDb: current.s.env.LQB_FAILED_DB! });
    try {
      expect(await queue.sizeByClass('mail', { [NODE]: async () => undefined }), 'the counts').toEqual([
        { class: PHP, ready: 1200, delayed: 0, reserved: 0, taken: false },
        { class: NODE, ready: 3, delayed: 2, reserved: 1, taken: true },
      ]);
    } finally {
      await queue.close();
    }
  });
});
