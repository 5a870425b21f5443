/**
 * A job dispatched by class name where no class shapes are at hand is written with every
 * property public; lqb dispatch and connect().dispatch say so once per class in a process,
 * naming the class, what could not be known and what to give. The CLI and a service (the
 * built package, its default logger and `logger: false`) run as processes of their own.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/connect/index.js';
import { unshapedLine } from '../../src/shapes/unshaped.js';
import { root } from '../helpers/php.js';
import { lqb, run, scratch } from '../helpers/processes.js';
import { REDIS_URL, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const prefix = uniquePrefix('unshaped');
const s = scratch(prefix, 'default');

afterAll(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s.remove();
});

describe('lqb dispatch without class shapes, the app not at hand', () => {
  it('--env naming a folder without vendor/ and app/: one line naming the class, what could not be known and the flags to give; the job is pushed', async () => {
    const bare = join(s.dir, 'no-app');
    mkdirSync(bare);
    writeFileSync(join(bare, '.env'), `REDIS_HOST=127.0.0.1\nREDIS_PREFIX=${prefix}\n`);
    const result = await lqb(
      ['dispatch', 'App\\Jobs\\Unshaped', '--props={"label":"x"}', '--queue=unshaped', `--env=${join(bare, '.env')}`],
      s.env,
    );
    expect(result.status, `lqb dispatch: ${result.stderr}`).toBe(0);
    const said = result.stderr.trim().split('\n');
    expect(said, 'what lqb dispatch said on standard error').toHaveLength(1);
    for (const part of [
      'lqb dispatch: App\\Jobs\\Unshaped was written without its class shapes',
      'whether its properties are protected or private',
      'each is written public',
      'give --shapes=FILE',
      '--env=APP/.env beside the app',
      '--strict-shapes refuses',
    ])
      expect(said[0], `lqb dispatch's line names ${part}`).toContain(part);
    const raw = rawClient();
    expect(await raw.llen(`${prefix}queues:unshaped`), 'the job lqb dispatch pushed').toBe(1);
    raw.disconnect();
  });
});

describe('connect().dispatch without class shapes', () => {
  it('says it to the logger once per class, however often the class is dispatched', async () => {
    const warned: [unknown, string | undefined][] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (fields: object, message?: string) => void warned.push([(fields as { event?: unknown }).event, message]),
      error: () => undefined,
    };
    const queue = await connect({ redis: REDIS_URL, prefix, logger });
    try {
      await queue.dispatch('App\\Jobs\\First', { n: 1 }, { queue: 'unshaped-lib' });
      await queue.dispatch('App\\Jobs\\First', { n: 2 }, { queue: 'unshaped-lib' });
      await queue.dispatch('App\\Jobs\\Second', { n: 3 }, { queue: 'unshaped-lib' });
      expect(await queue.size('unshaped-lib'), 'the jobs connect() pushed').toBe(3);
    } finally {
      await queue.close();
    }
    expect(
      warned.filter(([event]) => event === 'unshaped'),
      'what the logger heard of classes written without shapes',
    ).toEqual([
      ['unshaped', unshapedLine('App\\Jobs\\First', 'library')],
      ['unshaped', unshapedLine('App\\Jobs\\Second', 'library')],
    ]);
    expect(unshapedLine('App\\Jobs\\First', 'library'), 'the line names what to give').toMatch(
      /^App\\Jobs\\First was written without its class shapes: whether its properties are protected or private .* give shapes .*env beside the app's vendor\/ and app\/ .*strictShapes refuses instead$/,
    );
  });

  it("a service's default logger says it on standard error once per class; logger: false says nothing", async () => {
    const service = (logger: string) => `
      import { connect } from ${JSON.stringify(join(root, 'dist/index.js'))};
      const queue = await connect({ redis: ${JSON.stringify(REDIS_URL)}, prefix: ${JSON.stringify(prefix)}${logger} });
      for (const n of [1, 2]) await queue.dispatch('App\\\\Jobs\\\\Service', { n }, { queue: 'unshaped-service' });
      await queue.close();
    `;
    const said = await run('node', ['--input-type=module', '-e', service('')], s.env);
    expect(said.status, `the service with the default logger: ${said.stderr}`).toBe(0);
    expect(
      said.stderr.split('\n').filter((line) => line.includes('without its class shapes')),
      "the default logger's lines on standard error",
    ).toEqual([`laravel-queue-bridge: ${unshapedLine('App\\Jobs\\Service', 'library')}`]);
    const silent = await run('node', ['--input-type=module', '-e', service(', logger: false')], s.env);
    expect([silent.status, silent.stderr], 'the service with logger: false: its exit and standard error').toEqual([0, '']);
  });
});
