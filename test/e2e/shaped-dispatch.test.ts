/**
 * Checked dispatch against real Laravel 8.83: `lqb shapes` reads php-fixture-gen/shapes-app, Node
 * dispatches its jobs with those shapes, and
 * - the command is the very bytes PHP's own serialize() writes for the same job;
 * - Laravel's worker runs it and gets every value with its PHP type, and the declared tries,
 *   backoff and timeout in the envelope;
 * - a ShouldBeEncrypted job goes to Redis encrypted, and Laravel decrypts and runs it;
 * - an unknown property, a value of the wrong type and a missing required one are refused, one
 *   line naming class and property, and nothing is pushed.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePayload } from '../../src/laravel/index.js';
import { connect } from '../../src/connect/index.js';
import { serialize } from '../../src/php/index.js';
import { readShapes } from '../../src/shapes/read.js';
import { shapedCommand } from '../../src/shapes/command.js';
import type { ShapesFile } from '../../src/shapes/shape.js';
import { root } from '../helpers/php.js';
import { lqb, php, scratch, type Scratch } from '../helpers/processes.js';
import { dump, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

const QUEUE = 'shaped';
const prefix = uniquePrefix('shaped');
const s: Scratch = scratch(prefix, QUEUE);
const APP_KEY = 'base64:' + Buffer.alloc(32, 7).toString('base64');
const env = { ...s.env, APP_KEY };
let shapesFile: string;
let shapes: ShapesFile;

beforeAll(async () => {
  shapesFile = join(s.dir, 'lqb-shapes.json');
  const made = await lqb(['shapes', `--app=${join(root, 'php-fixture-gen/shapes-app')}`, `--out=${shapesFile}`], env);
  expect(made.status, made.stderr).toBe(0);
  shapes = readShapes(shapesFile);
});

afterAll(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
  s.remove();
});

/** The command of the job last pushed onto a queue. */
async function lastCommandOn(queue: string): Promise<string> {
  const raw = rawClient();
  try {
    const [payload] = await raw.lrange(`${prefix}queues:${queue}`, -1, -1);
    return String((decodePayload(payload!).envelope.data as { command: string }).command);
  } finally {
    raw.disconnect();
  }
}

/** PHP's own serialize() of a shapes-app job (php-fixture-gen/shapes-serialize.php). */
function phpSerialize(spec: object): string {
  const out = execFileSync('php', [join(root, 'php-fixture-gen/shapes-serialize.php'), JSON.stringify(spec)], { encoding: 'utf8' });
  return (JSON.parse(out) as { serialized: string }).serialized;
}

const dispatch = (className: string, props: object, ...flags: string[]) =>
  lqb(['dispatch', className, `--props=${JSON.stringify(props)}`, `--queue=${QUEUE}`, ...flags], env);

describe('a command built from its shape is the bytes PHP writes', () => {
  const cases: [string, Record<string, unknown>, object][] = [
    ['App\\Jobs\\ShipOrder', { orderId: 7, secret: 's3' }, { args: [7, 's3'] }],
    [
      'App\\Jobs\\ShipOrder',
      { orderId: 7, secret: 's3', weight: 2, express: true, notes: ['a', 'b'], coupon: null, untyped: 5 },
      { args: [7, 's3'], set: { weight: 2.0, express: true, notes: ['a', 'b'], coupon: null, untyped: 5 } },
    ],
    ['App\\Jobs\\MonthlyReport', { month: 3, recipients: ['a@example.com'] }, { args: [3, ['a@example.com']] }],
    ['App\\Jobs\\MonthlyReport', { month: 3 }, { args: [3] }],
    ['App\\Jobs\\ChargeCard', { cardToken: 'tok_1', amount: 1250 }, { args: ['tok_1', 1250] }],
    ['App\\Jobs\\SyncUser', { user: 5 }, { args: [{ '@model': 'App\\Models\\User', id: 5 }] }],
    [
      'App\\Jobs\\SyncUser',
      { user: { id: 5, connection: 'mysql' }, friends: { class: 'App\\Models\\User', id: [1, 2] } },
      {
        args: [
          { '@model': 'App\\Models\\User', id: 5 },
          { '@collection': 'App\\Models\\User', ids: [1, 2] },
        ],
      },
    ],
  ];
  for (const [className, props, spec] of cases) {
    it(`${className} with ${JSON.stringify(props)}`, () => {
      const ours = Buffer.from(serialize(shapedCommand(shapes, className, props).command)).toString('utf8');
      expect(ours).toBe(phpSerialize({ class: className, ...spec }));
    });
  }
});

describe('Node dispatches with the shapes; Laravel’s worker runs the jobs', () => {
  let records: Record<string, any>[];
  let payloads: Record<string, string>;

  beforeAll(async () => {
    const pushed = [
      await dispatch('App\\Jobs\\ShipOrder', { orderId: 7, secret: 'hush', weight: 2, express: true }, `--shapes=${shapesFile}`),
      await dispatch('App\\Jobs\\MonthlyReport', { month: 11, recipients: ['a@example.com'] }, `--shapes=${shapesFile}`),
      await lqb(
        ['dispatch', 'App\\Jobs\\ChargeCard', `--props=${JSON.stringify({ cardToken: 'tok_secret', amount: 990 })}`, `--queue=${QUEUE}`],
        { ...env, LQB_SHAPES: shapesFile },
      ),
    ];
    for (const result of pushed) expect(result.status, result.stderr).toBe(0);
    const raw = rawClient();
    const state = await dump(raw, prefix);
    raw.disconnect();
    payloads = Object.fromEntries(((state[`queues:${QUEUE}`] ?? []) as string[]).map((p) => [JSON.parse(p).displayName, p]));
    const worker = await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], env, { timeoutMs: 60_000 });
    expect(worker.status, worker.stderr).toBe(0);
    records = s.phpRuns();
  }, 90_000);

  it('each value arrives with its PHP type, protected and private ones included', () => {
    const ship = records.find((r) => r.class === 'App\\Jobs\\ShipOrder');
    expect(ship?.props).toEqual({
      orderId: 7,
      secret: 'hush',
      notes: null,
      weight: 2,
      express: true,
      coupon: 'uninitialized',
      untyped: 'plain',
      types: { orderId: 'int', secret: 'string', notes: 'null', weight: 'float', express: 'bool', coupon: 'string', untyped: 'string' },
    });
    const report = records.find((r) => r.class === 'App\\Jobs\\MonthlyReport');
    expect(report?.props).toMatchObject({
      month: 11,
      recipients: ['a@example.com'],
      tenant: 'acme',
      version: 1,
      types: { month: 'int', recipients: 'array' },
    });
  });

  it('the declared tries, backoff and timeout are in the envelope, as PHP’s dispatch writes them', () => {
    const envelope = JSON.parse(payloads['App\\Jobs\\ShipOrder']!);
    expect([envelope.maxTries, envelope.backoff, envelope.timeout, envelope.maxExceptions]).toEqual([4, '1,2', 30, 3]);
    const ship = records.find((r) => r.class === 'App\\Jobs\\ShipOrder');
    expect([ship?.maxTries, ship?.backoff, ship?.timeout]).toEqual([4, '1,2', 30]);
  });

  it('a ShouldBeEncrypted job sits in Redis encrypted, and Laravel decrypts and runs it', () => {
    const raw = payloads['App\\Jobs\\ChargeCard']!;
    expect(raw).not.toContain('tok_secret');
    expect(decodePayload(raw).encrypted).toBe(true);
    const charge = records.find((r) => r.class === 'App\\Jobs\\ChargeCard');
    expect(charge?.props).toMatchObject({ cardToken: 'tok_secret', amount: 990, types: { cardToken: 'string', amount: 'int' } });
    expect(charge?.maxTries).toBe(2);
  });
});

describe('what the class would not hold is refused before anything is pushed', () => {
  const refusals: [string, Record<string, unknown>, RegExp][] = [
    ['App\\Jobs\\ShipOrder', { orderId: 7, secret: 's', secrett: 'typo' }, /^lqb dispatch: App\\Jobs\\ShipOrder has no property \$secrett/],
    ['App\\Jobs\\ShipOrder', { orderId: '7', secret: 's' }, /^lqb dispatch: App\\Jobs\\ShipOrder::\$orderId is int; the string "7" is not/],
    ['App\\Jobs\\ShipOrder', { orderId: 7 }, /^lqb dispatch: App\\Jobs\\ShipOrder::\$secret \(string\) is required/],
    ['App\\Jobs\\ShipOrder', { orderId: 7, secret: null }, /^lqb dispatch: App\\Jobs\\ShipOrder::\$secret is string, not nullable/],
    ['App\\Jobs\\SyncUser', { user: [1, 2] }, /^lqb dispatch: App\\Jobs\\SyncUser::\$user holds a App\\Models\\User: give its key/],
    ['App\\Jobs\\Missing', {}, /^lqb dispatch: App\\Jobs\\Missing is not in the shapes file/],
  ];
  for (const [className, props, message] of refusals) {
    it(`${className} ${JSON.stringify(props)}`, async () => {
      const result = await dispatch(className, props, `--shapes=${shapesFile}`, '--queue=refused');
      expect(result.status, result.stdout).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(message);
      const raw = rawClient();
      const state = await dump(raw, prefix);
      raw.disconnect();
      expect(Object.keys(state).filter((key) => key.startsWith('queues:refused'))).toEqual([]);
    });
  }

  it('a ShouldBeEncrypted job without an APP_KEY is refused, never pushed in clear text', async () => {
    const result = await lqb(
      [
        'dispatch',
        'App\\Jobs\\ChargeCard',
        `--props=${JSON.stringify({ cardToken: 't', amount: 1 })}`,
        '--queue=refused',
        `--shapes=${shapesFile}`,
      ],
      s.env,
    );
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/ChargeCard is ShouldBeEncrypted: give the APP_KEY/);
  });
});

describe('a ShouldBeUnique job dispatched from Node takes its lock as PendingDispatch does', () => {
  const UNIQUE_QUEUE = 'unique';
  const uniqueEnv = { ...env, QUEUE_NAME: UNIQUE_QUEUE };
  const lockKey = `${prefix}laravel_cache:laravel_unique_job:App\\Jobs\\ImportFeed`;
  const queued = async () => {
    const raw = rawClient();
    const length = await raw.llen(`${prefix}queues:${UNIQUE_QUEUE}`);
    raw.disconnect();
    return length;
  };
  const phpDispatch = async () =>
    JSON.parse(
      (await php('shapes-dispatch.php', [JSON.stringify({ class: 'App\\Jobs\\ImportFeed', args: ['php'] })], uniqueEnv)).stdout,
    ) as { queued: boolean };

  it('the duplicate is dropped on either side; once Laravel’s worker has run the job, Node dispatches again', async () => {
    const first = await lqb(
      ['dispatch', 'App\\Jobs\\ImportFeed', '--props={"feed":"news"}', `--queue=${UNIQUE_QUEUE}`, `--shapes=${shapesFile}`],
      uniqueEnv,
    );
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).uuid, 'the first dispatch is pushed').toEqual(expect.any(String));
    const raw = rawClient();
    const [owner, ttl] = [await raw.get(lockKey), await raw.ttl(lockKey)];
    raw.disconnect();
    expect(owner, `the lock ${lockKey}`).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(ttl, 'the lock lives uniqueFor (60) seconds').toBeGreaterThan(55);

    const second = await lqb(
      ['dispatch', 'App\\Jobs\\ImportFeed', '--props={"feed":"news"}', `--queue=${UNIQUE_QUEUE}`, `--shapes=${shapesFile}`],
      uniqueEnv,
    );
    expect([second.status, JSON.parse(second.stdout)]).toEqual([0, { uuid: null, id: null, queue: UNIQUE_QUEUE, duplicate: true }]);
    expect(second.stderr).toMatch(
      /not pushed: App\\Jobs\\ImportFeed is ShouldBeUnique and its lock laravel_unique_job:App\\Jobs\\ImportFeed is held/,
    );
    expect(await phpDispatch(), 'Laravel’s own dispatch meanwhile').toEqual({ queued: false });
    expect(await queued()).toBe(1);

    const worker = await php('laravel-worker.php', [`--queue=${UNIQUE_QUEUE}`, '--stop-when-empty', '--sleep=0'], uniqueEnv, {
      timeoutMs: 60_000,
    });
    expect(worker.status, worker.stderr).toBe(0);
    expect(
      s
        .phpRuns()
        .filter((r) => r.class === 'App\\Jobs\\ImportFeed')
        .map((r) => r.props.feed),
    ).toEqual(['news']);
    const after = await lqb(
      ['dispatch', 'App\\Jobs\\ImportFeed', '--props={"feed":"again"}', `--queue=${UNIQUE_QUEUE}`, `--shapes=${shapesFile}`],
      uniqueEnv,
    );
    expect(JSON.parse(after.stdout).uuid, 'dispatched after Laravel released the lock').toEqual(expect.any(String));
    expect(await queued()).toBe(1);
  });

  it('a class whose uniqueId() lqb shapes could not translate is refused without --unique-id, and locked under it with one', async () => {
    const refused = await lqb(
      ['dispatch', 'App\\Jobs\\PlainReport', '--props={"pages":3}', `--queue=${UNIQUE_QUEUE}-m`, `--shapes=${shapesFile}`],
      uniqueEnv,
    );
    expect([refused.status, refused.stderr]).toEqual([
      2,
      expect.stringMatching(
        /^lqb dispatch: App\\Jobs\\PlainReport defines uniqueId\(\), which lqb shapes could not translate \(it calls or names sprintf, which is not translated\): give the id it would return \(--unique-id/,
      ),
    ]);
    const given = await lqb(
      ['dispatch', 'App\\Jobs\\PlainReport', '--props={"pages":3}', `--queue=${UNIQUE_QUEUE}-m`, '--unique-id=3', `--shapes=${shapesFile}`],
      uniqueEnv,
    );
    expect(given.status, given.stderr).toBe(0);
    const raw = rawClient();
    expect(await raw.exists(`${prefix}laravel_cache:laravel_unique_job:App\\Jobs\\PlainReport3`)).toBe(1);
    raw.disconnect();
  });
});

describe('lqb dispatch --env beside the app reads its shapes without being asked', () => {
  it('writes the bytes PHP writes, reads the shapes again only when a class file changed, and --strict-shapes refuses without them', async () => {
    // The app as a team has it: its own app/ (a copy, so a class file can change) and vendor/.
    const app = join(s.dir, 'app-at-hand');
    mkdirSync(app);
    cpSync(join(root, 'php-fixture-gen/shapes-app/app'), join(app, 'app'), { recursive: true });
    symlinkSync(join(root, 'php-fixture-gen/shapes-app/vendor'), join(app, 'vendor'));
    writeFileSync(join(app, '.env'), `APP_NAME=AtHand\nREDIS_HOST=127.0.0.1\nREDIS_PREFIX=${prefix}\n`);
    const atHand = (...flags: string[]) =>
      lqb(
        [
          'dispatch',
          'App\\Jobs\\ShipOrder',
          '--props={"orderId":7,"secret":"s3"}',
          `--queue=${QUEUE}-athand`,
          `--env=${join(app, '.env')}`,
          ...flags,
        ],
        env,
      );
    const lastCommand = () => lastCommandOn(`${QUEUE}-athand`);

    const first = await atHand();
    expect([first.status, first.stderr.trim()], 'the first dispatch: status and what it said').toEqual([
      0,
      expect.stringMatching(
        new RegExp(
          `^lqb dispatch: class shapes of ${app.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\d+ classes, (read by PHP now|unchanged since PHP read them)$`,
        ),
      ),
    ]);
    expect(await lastCommand(), 'the command, beside PHP’s own serialize() of new ShipOrder(7, "s3")').toBe(
      phpSerialize({ class: 'App\\Jobs\\ShipOrder', args: [7, 's3'], set: { queue: `${QUEUE}-athand` } }),
    );
    const second = await atHand();
    expect(second.stderr.trim(), 'the second dispatch, nothing changed').toMatch(/unchanged since PHP read them$/);
    const later = new Date(Date.now() + 5000);
    utimesSync(join(app, 'app/Jobs/ShipOrder.php'), later, later);
    const third = await atHand();
    expect(third.stderr.trim(), 'the dispatch after a class file changed').toMatch(/read by PHP now$/);

    const bare = join(s.dir, 'no-app');
    mkdirSync(bare);
    writeFileSync(join(bare, '.env'), `REDIS_HOST=127.0.0.1\nREDIS_PREFIX=${prefix}\n`);
    const strict = await lqb(
      [
        'dispatch',
        'App\\Jobs\\ShipOrder',
        '--props={"orderId":7,"secret":"s3"}',
        `--queue=${QUEUE}-strict`,
        `--env=${join(bare, '.env')}`,
        '--strict-shapes',
      ],
      env,
    );
    expect([strict.status, strict.stderr.trim().split('\n')], 'lqb dispatch --strict-shapes without shapes').toEqual([
      1,
      [expect.stringMatching(/^lqb dispatch: App\\Jobs\\ShipOrder was not pushed: --strict-shapes, and no class shapes/)],
    ]);
    const raw = rawClient();
    expect(await raw.llen(`${prefix}queues:${QUEUE}-strict`), 'what --strict-shapes pushed').toBe(0);
    raw.disconnect();
  });

  it('connect({ env }) beside the app does the same for the library, says it to the logger, and strictShapes refuses without shapes', async () => {
    const app = join(s.dir, 'app-at-hand');
    const said: [string, string | undefined][] = [];
    const logger = {
      debug: () => undefined,
      info: (fields: object, message?: string) => said.push([String((fields as { event?: unknown }).event), message]),
      warn: (fields: object, message?: string) => said.push([String((fields as { event?: unknown }).event), message]),
      error: () => undefined,
    };
    const queue = await connect({ env: join(app, '.env'), logger });
    try {
      await queue.dispatch('App\\Jobs\\ShipOrder', { orderId: 7, secret: 's3' }, { queue: `${QUEUE}-athand` });
    } finally {
      await queue.close();
    }
    expect(
      said.filter(([event]) => event === 'shapes'),
      'what connect() said of the shapes',
    ).toEqual([['shapes', expect.stringMatching(/^class shapes of .*app-at-hand: \d+ classes, unchanged since PHP read them$/)]]);
    expect(await lastCommandOn(`${QUEUE}-athand`), 'the command connect() dispatched, beside PHP’s own serialize()').toBe(
      phpSerialize({ class: 'App\\Jobs\\ShipOrder', args: [7, 's3'], set: { queue: `${QUEUE}-athand` } }),
    );
    const strict = await connect({ redis: 'redis://127.0.0.1:6379', prefix, strictShapes: true, logger: false });
    try {
      await expect(
        strict.dispatch('App\\Jobs\\ShipOrder', { orderId: 7 }),
        'a strict connection’s dispatch without shapes',
      ).rejects.toThrow(/^App\\Jobs\\ShipOrder was not pushed: strictShapes, and no class shapes/);
    } finally {
      await strict.close();
    }
  });
});
