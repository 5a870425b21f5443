/**
 * `lqb fixtures`: the sample app's own PHP (php-fixture-gen/shapes-app on Debian's Laravel 8.83)
 * makes the payloads. What it writes is what the app's own dispatch() pushes for the same instance
 * (real Laravel, dispatch(new CLASS(...)) into real Redis), but the uuid and id each dispatch makes
 * afresh; a model given as a marker is the ModelIdentifier SerializesModels writes; an encrypted
 * class is encrypted with the key given; a jobs table's payload has no id or attempts; and runJob
 * runs the handler on it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Encrypter, commandOf, decodePayload } from '../../src/laravel/index.js';
import { toJS } from '../../src/php/index.js';
import { runJob } from '../../src/testing/index.js';
import { root } from '../helpers/php.js';
import { lqb, php, scratch } from '../helpers/processes.js';
import { rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const APP = join(root, 'php-fixture-gen/shapes-app');
const KEY = `base64:${Buffer.alloc(32, 7).toString('base64')}`;
const QUEUE = 'fixtures';
const prefix = uniquePrefix('fixtures');
const s = scratch(prefix, QUEUE);

afterAll(async () => {
  s.remove();
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

interface Line {
  class: string;
  queue: string;
  payload: string;
}

async function fixtures(args: string[], env: NodeJS.ProcessEnv = s.env): Promise<Line[]> {
  const result = await lqb(['fixtures', ...args, `--app=${APP}`], env);
  expect(result.status, `lqb fixtures ${args.join(' ')}: exit status (stderr: ${result.stderr})`).toBe(0);
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
}

/** A payload with what each dispatch makes afresh masked: the uuid and the id. */
const masked = (payload: string) => JSON.stringify({ ...JSON.parse(payload), uuid: 'UUID', id: 'ID' });

describe('lqb fixtures', () => {
  it('writes what the app’s own dispatch() pushes for the same instance, but the uuid and id', async () => {
    const [made] = await fixtures(['App\\Jobs\\ShipOrder', '--props={"orderId":7,"secret":"s3"}', `--queue=${QUEUE}`]);
    const dispatched = await php('shapes-dispatch.php', [JSON.stringify({ class: 'App\\Jobs\\ShipOrder', args: [7, 's3'] })], s.env);
    expect(dispatched.status, `shapes-dispatch.php: ${dispatched.stderr}`).toBe(0);
    const raw = rawClient();
    const [pushed] = await raw.lrange(`${prefix}queues:${QUEUE}`, 0, -1);
    raw.disconnect();
    expect([made?.class, made?.queue], 'class and queue').toEqual(['App\\Jobs\\ShipOrder', QUEUE]);
    expect(masked(made!.payload), 'lqb fixtures (left) against Laravel’s dispatch() into Redis').toBe(masked(pushed!));
  });

  it('queues a listener as event() queues it: the props are its event’s', async () => {
    const raw = rawClient();
    await raw.del(`${prefix}queues:${QUEUE}`);
    const [made] = await fixtures(['App\\Listeners\\SendShipmentNotification', '--props={"orderId":5}']);
    const fired = await php(
      'shapes-dispatch.php',
      [JSON.stringify({ event: 'App\\Events\\OrderShipped', args: [5], listener: 'App\\Listeners\\SendShipmentNotification' })],
      s.env,
    );
    expect(fired.status, `shapes-dispatch.php: ${fired.stderr}`).toBe(0);
    const [pushed] = await raw.lrange(`${prefix}queues:${QUEUE}`, 0, -1);
    raw.disconnect();
    expect(masked(made!.payload), 'lqb fixtures (left) against Laravel’s event() into Redis').toBe(masked(pushed!));
  });

  it('makes a model given as a marker the ModelIdentifier SerializesModels writes, with no database', async () => {
    const [made] = await fixtures(['App\\Jobs\\SyncUser', '--props={"user":{"@model":"App\\\\Models\\\\User","id":3}}']);
    const command = toJS(decodePayload(made!.payload).command!) as { user: Record<string, unknown> };
    expect(command.user, 'the user property').toMatchObject({ class: 'App\\Models\\User', id: 3 });
  });

  it('encrypts a ShouldBeEncrypted class with the key given; a list of props makes a payload each', async () => {
    const lines = await fixtures(['App\\Jobs\\ChargeCard', '--props=[{"cardToken":"tok_1","amount":5},{"cardToken":"tok_2","amount":6}]'], {
      ...s.env,
      APP_KEY: KEY,
    });
    expect(lines.length, 'payloads').toBe(2);
    const encrypter = new Encrypter(KEY, 'AES-256-CBC');
    const read = lines.map((line) => {
      const decoded = decodePayload(line.payload);
      expect(decoded.encrypted, 'the command is encrypted').toBe(true);
      return toJS(commandOf(decoded, encrypter).command!) as { cardToken: string; amount: number };
    });
    expect(
      read.map((command) => [command.cardToken, command.amount]),
      'the commands decrypted',
    ).toEqual([
      ['tok_1', 5],
      ['tok_2', 6],
    ]);
  });

  it('lays a jobs table’s payload out without id or attempts (--connection=database)', async () => {
    const [made] = await fixtures(['App\\Jobs\\ShipOrder', '--props={"orderId":1,"secret":"x"}', '--connection=database']);
    const envelope = JSON.parse(made!.payload) as Record<string, unknown>;
    expect(['id' in envelope, 'attempts' in envelope], 'id, attempts in the envelope').toEqual([false, false]);
  });

  it('gives runJob bytes PHP wrote: the handler reads the properties given', async () => {
    const [made] = await fixtures(['App\\Jobs\\ShipOrder', '--props={"orderId":42,"secret":"s"}']);
    const seen: unknown[] = [];
    const result = await runJob({ 'App\\Jobs\\ShipOrder': (job) => void seen.push(job.command.orderId) }, made!.payload);
    expect([result.outcome, seen], 'outcome, orderId read').toEqual(['completed', [42]]);
  });

  it('names a class the app does not have, or a property the class does not have, in one line', async () => {
    const missing = await lqb(['fixtures', 'App\\Jobs\\Nope', '--props={}', `--app=${APP}`], s.env);
    expect([missing.status, missing.stderr.trim()], 'no such class').toEqual([
      1,
      'lqb fixtures: App\\Jobs\\Nope: no such class in the app (its autoloader does not find it)',
    ]);
    const property = await lqb(['fixtures', 'App\\Jobs\\ShipOrder', '--props={"nope":1}', `--app=${APP}`], s.env);
    expect([property.status, property.stderr.trim()], 'no such property').toEqual([
      1,
      'lqb fixtures: App\\Jobs\\ShipOrder has no property "nope"',
    ]);
    const json = await lqb(['fixtures', 'App\\Jobs\\ShipOrder', '--props={', `--app=${APP}`], s.env);
    expect(json.status, 'props that are not JSON: a usage error').toBe(2);
  });
});

// The written file matches what is printed.
describe('lqb fixtures --out', () => {
  it('writes the lines to the file and says how many', async () => {
    const out = join(s.dir, 'ship.jsonl');
    const result = await lqb(
      ['fixtures', 'App\\Jobs\\ShipOrder', '--props={"orderId":3,"secret":"q"}', `--app=${APP}`, `--out=${out}`],
      s.env,
    );
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr, 'the closing line').toContain(`1 payload of App\\Jobs\\ShipOrder written to ${out}`);
    const [line] = readFileSync(out, 'utf8').split('\n');
    expect((JSON.parse(line!) as Line).class, 'the class in the file').toBe('App\\Jobs\\ShipOrder');
  });
});
