/**
 * Node's side writes Horizon's records as Horizon 5.22.1's own code wrote them under Laravel
 * 8.83: the fixtures' scenario (fixtures/horizon/events.jsonl) replayed event by event on real
 * Redis, Node producing and consuming (our RedisQueue for the queue's keys, HorizonRecorder for
 * Horizon's), and after each event every key under both prefixes compared with the fixture's
 * "after" field by field, times and Node's own runtime and exception text masked.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPayload } from '../../src/laravel/index.js';
import { PhpObject, unserialize } from '../../src/php/index.js';
import { RedisQueue, connectRedis, type RedisJob } from '../../src/redis/index.js';
import { HorizonRecorder, type PrepareOptions } from '../../src/horizon/index.js';
import { horizonIdOf } from '../../src/horizon/payload.js';
import { REDIS_URL, prefixedClient, rawClient, removePrefix } from '../helpers/redis.js';
import { runPhpScript } from '../helpers/php.js';
import { dumpState, masked, readHorizonFixtures, type FixtureLine, type TimeWindow } from './fixtures.js';

const lines = readHorizonFixtures();
const base = `lqb-horizon-${randomBytes(4).toString('hex')}-`;
const appPrefix = `${base}database_`;
const horizonPrefix = `${base}horizon:`;
const raw = rawClient();
const queueClient = prefixedClient(appPrefix);
const horizonClient = connectRedis({ url: REDIS_URL });
let queue = new RedisQueue(queueClient, { defaultQueue: 'default', retryAfter: 90 });
/**
 * One record per step, as a producer writes; then, for the scenario's second run, batched per
 * turn; then, for its third, batched with the queue's own steps writing the records of its
 * moves (reserved, released, migrated), as a worker on Redis writes them.
 */
let recorder = new HorizonRecorder(horizonClient, { prefix: horizonPrefix, connection: 'redis' });
/** The queue's steps write the records of its moves (the third run). */
let inStep = false;
const started = Math.floor(Date.now() / 1000);

afterAll(async () => {
  await removePrefix(raw, base);
  raw.disconnect();
  queueClient.disconnect();
  horizonClient.disconnect();
});

/** The payload Laravel 8.83's RedisQueue writes for the fixture's job (before Horizon's queue rewrites it). */
function laravelPayload(line: FixtureLine): string {
  const pushed = JSON.parse(line.payload!) as Record<string, unknown> & { data: { command: string } };
  const command = unserialize(pushed.data.command) as PhpObject;
  return buildPayload(command, {
    profile: '8',
    uuid: pushed.uuid as string,
    displayName: pushed.displayName as string,
    maxTries: pushed.maxTries as number | null,
    maxExceptions: pushed.maxExceptions as number | null,
    failOnTimeout: pushed.failOnTimeout as boolean,
    backoff: pushed.backoff as string | null,
    timeout: pushed.timeout as number | null,
    retryUntil: pushed.retryUntil as number | null,
  }).raw;
}

/** What stands in for each job's PHP methods: B's tags(), D's Silenced interface. */
const PREPARE: Record<string, PrepareOptions> = {
  'App\\Jobs\\ChargeCustomer': { tags: ['billing', 'customer:7'] },
  'App\\Jobs\\PruneCache': { silenced: true },
};

let job: RedisJob | undefined;
const jobs = new Map<string, RedisJob>();

/** Each step as a Node producer and worker do it, with Horizon's records beside. */
async function replay(line: FixtureLine): Promise<void> {
  const id = line.jobId!;
  switch (line.event) {
    case 'TagRepository::monitor':
      return recorder.monitor('billing');
    case 'JobPushed': {
      const fromRetry = line.step === 18;
      const payload = fromRetry
        ? recorder.prepare(recorder.retryPayload((await raw.hget(horizonPrefix + lines[13]!.jobId!, 'payload'))!, lines[13]!.jobId!, id), {
            raw: true,
          })
        : recorder.prepare(laravelPayload(line), {
            ...PREPARE[line.jobName!],
            // A's producer hands over the command it built (as dispatch will); the others are read from their payloads.
            ...(line.step === 2 ? { command: unserialize(JSON.parse(line.payload!).data.command as string) } : {}),
          });
      expect(
        masked(payload, { times: ['#/pushedAt'] }, window(), `step ${line.step} payload`),
        `step ${line.step}: the payload Horizon's queue pushes`,
      ).toBe(masked(line.payload, { times: ['#/pushedAt'] }, undefined, `fixture step ${line.step} payload`));
      if (line.step === 22) await queue.laterRaw(300, payload, 'default');
      else await queue.pushRaw(payload, 'default');
      return recorder.pushed('default', payload);
    }
    case 'JobReserved':
      job = (await queue.pop('default'))!;
      expect(job, `step ${line.step}: a job to reserve`).not.toBeNull();
      jobs.set(id, job);
      if (inStep) return;
      return recorder.reserved('default', job.reserved);
    case 'JobReleased':
      await queue.release(jobs.get(id)!, 0);
      if (inStep) return;
      return recorder.released('default', jobs.get(id)!.reserved);
    case 'JobsMigrated':
      // Our reserve step migrates before it pops; the worker hears which payloads moved.
      await queue.migrate('default');
      if (inStep) return;
      return recorder.migrated('default', [jobs.get(id)!.reserved]);
    case 'JobDeleted': {
      const failing = line.step === 13;
      const runtimeMs = measuredRuntime(line);
      // The queue's delete step writes the completion; a failing delete's records are the recorder's, with the failure.
      await queue.deleteReserved(jobs.get(id)!, inStep ? { failing, ...(runtimeMs === undefined ? {} : { runtimeMs }) } : undefined);
      if (inStep && !failing) return;
      return recorder.deleted('default', jobs.get(id)!.reserved, { failing, runtimeMs });
    }
    case 'JobFailed':
      return recorder.failed('default', jobs.get(id)!.reserved, new Error('CRM rejected user 42'));
    case 'RetryFailedJob':
      return recorder.retried(id, lines[17]!.jobId!);
    default:
      throw new Error(`step ${line.step}: no replay for ${line.event}`);
  }
}

/**
 * The runtime PHP measured for the job (each job runs once here, so its job:NAME mean is its
 * own runtime): given to the recorder as Node's, the queue's running mean must then come out
 * byte for byte as Horizon's step wrote it.
 */
function measuredRuntime(line: FixtureLine): number | undefined {
  const metrics = line.after.find((k) => k.key === `laravel_horizon:job:${line.jobName}`)?.value as Record<string, string> | undefined;
  return metrics?.throughput === '1' ? Number(metrics.runtime) : undefined;
}

function window(): TimeWindow {
  return { from: started, to: Math.ceil(Date.now() / 1000) + 300 };
}

async function expectState(line: FixtureLine): Promise<void> {
  const ours = await dumpState(raw, appPrefix, horizonPrefix);
  const where = `step ${line.step} (${line.event})`;
  expect(
    ours.map((k) => k.key),
    `${where}: the keys`,
  ).toEqual(line.after.map((k) => k.key));
  for (const expected of line.after) {
    const actual = ours.find((k) => k.key === expected.key)!;
    const at = `${where} ${expected.key}`;
    expect(actual.type, `${at}: type`).toBe(expected.type);
    if (expected.ttl < 0) expect(actual.ttl, `${at}: no expiry`).toBe(expected.ttl);
    else expect(Math.abs(actual.ttl - expected.ttl), `${at}: expiry ${actual.ttl}s, Horizon's ${expected.ttl}s`).toBeLessThanOrEqual(5);
    const mine = masked(actual.value, expected, window(), at);
    const theirs = masked(expected.value, expected, undefined, `fixture ${at}`);
    if (expected.type === 'hash') {
      const fields = theirs as Record<string, string>;
      expect(Object.keys(mine as object), `${at}: the hash's fields`).toEqual(Object.keys(fields));
      for (const field of Object.keys(fields)) expect((mine as Record<string, string>)[field], `${at}: field ${field}`).toBe(fields[field]);
    } else expect(mine, `${at}: value`).toEqual(theirs);
  }
}

const RUNS = [
  { batch: false, steps: false, title: '' },
  { batch: true, steps: false, title: ' (batched, as a worker writes)' },
  {
    batch: true,
    steps: true,
    title: " (batched, the queue's steps writing the records of its moves and deletes, as a worker on Redis writes)",
  },
];
for (const { batch, steps, title } of RUNS)
  describe(`HorizonRecorder${title}: the fixtures' scenario, event by event`, () => {
    beforeAll(async () => {
      await removePrefix(raw, base);
      recorder = new HorizonRecorder(horizonClient, { prefix: horizonPrefix, connection: 'redis', batch });
      inStep = steps;
      queue = new RedisQueue(queueClient, {
        defaultQueue: 'default',
        retryAfter: 90,
        ...(steps ? { horizon: recorder.queueRecords() } : {}),
      });
      jobs.clear();
      job = undefined;
    });

    for (const line of lines) {
      it(`step ${line.step} ${line.event}: ${line.action}`, async () => {
        expect(
          await dumpState(raw, appPrefix, horizonPrefix).then((s) => s.map((k) => k.key)),
          `step ${line.step}: the keys before`,
        ).toEqual(line.before.map((k) => k.key));
        await replay(line);
        await expectState(line);
        if (measuredRuntime(line) !== undefined) {
          // Unmasked: with PHP's runtime for this job, the running means are Horizon's to the byte.
          const ours = await dumpState(raw, appPrefix, horizonPrefix);
          for (const key of ['laravel_horizon:queue:default', `laravel_horizon:job:${line.jobName}`]) {
            expect(ours.find((k) => k.key === key)?.value, `step ${line.step} ${key}: throughput and runtime`).toEqual(
              line.after.find((k) => k.key === key)?.value,
            );
          }
        }
      });
    }
  });

describe('HorizonRecorder beyond the fixtures’ scenario', () => {
  const prefix = `${base}more:`;

  /** Every key under a prefix, named without it, with its value and when it expires. */
  const stateUnder = (p: string) => dumpState(raw, `${p}\0none`, p, 'at');

  /** A job's payload as these tests push it: a first attempt of App\\Jobs\\X without tags, unless `more` says otherwise. */
  const jobPayload = (id: string, more: Record<string, unknown> = {}) =>
    JSON.stringify({ uuid: id, id, displayName: 'App\\Jobs\\X', attempts: 0, tags: [], ...more });

  /** The status of each job's record in a state (hashes without one, the metrics, left out). */
  const statusesOf = (state: Awaited<ReturnType<typeof stateUnder>>) =>
    Object.fromEntries(
      state
        .filter((k) => k.type === 'hash' && (k.value as Record<string, string>).status !== undefined)
        .map((k) => [k.key, (k.value as Record<string, string>).status]),
    );

  /**
   * The state a scenario leaves written both ways, by the recorder's steps and then by the
   * queue's (`steps`), each on prefixes of its own: the app's (the queue's client) and Horizon's.
   */
  const bothWays = async (
    label: string,
    scenario: (steps: boolean, p: string, client: ReturnType<typeof prefixedClient>) => Promise<void>,
  ) => {
    const run = randomBytes(3).toString('hex');
    const states: Awaited<ReturnType<typeof stateUnder>>[] = [];
    for (const steps of [false, true]) {
      const name = `${base}${label}-${run}-${steps ? 'steps' : 'recorder'}`;
      const client = prefixedClient(`${name}-app:`);
      try {
        await scenario(steps, `${name}-hz:`, client);
        states.push(await stateUnder(`${name}-hz:`));
      } finally {
        client.disconnect();
      }
    }
    return states as [Awaited<ReturnType<typeof stateUnder>>, Awaited<ReturnType<typeof stateUnder>>];
  };

  for (const [what, clock] of [
    // Fixed for the test: both ways of writing are stamped alike, whenever a second turns between them.
    [
      'a time of now',
      (
        (at) => () =>
          at
      )(Math.floor(Date.now() / 1000) + 0.44851),
    ],
    ['a time PHP prints otherwise (before the epoch: no token, sent as arguments)', () => -5.25],
  ] as const)
    it(`batched, writes what one step per record writes, for every kind of event, several completions of one queue and class, and ${what}`, async () => {
      const payload = (id: string, more: Record<string, unknown> = {}) => jobPayload(id, { attempts: 1, ...more });
      const states: Awaited<ReturnType<typeof stateUnder>>[] = [];
      const run = randomBytes(3).toString('hex');
      for (const batch of [false, true]) {
        const p = `${base}${batch ? 'batched' : 'single'}-${run}:`;
        const more = new HorizonRecorder(horizonClient, { prefix: p, batch, clock, silenced: [] });
        await raw.sadd(`${p}monitoring`, 'vip');
        await raw.hset(`${p}old-1`, 'retried_by', JSON.stringify([{ id: 'b-1', status: 'pending', retried_at: 1 }]));
        const tagged = payload('b-1', { tags: ['vip', 'x'], retry_of: 'old-1' });
        // All in one turn: batched, they are one call.
        await Promise.all([
          more.reserved('default', payload('a-1')),
          more.reserved('default', tagged),
          more.deleted('default', payload('a-1'), { runtimeMs: 1e21 }),
          more.deleted('other', tagged, { runtimeMs: 1.005 }),
          more.reserved('default', Buffer.from(payload('c-1', { silenced: true }))),
          more.deleted('default', payload('c-1', { silenced: true }), { runtimeMs: 3 }),
          more.reserved('default', payload('f-1', { tags: ['vip'] })),
          more.deleted('default', payload('f-1', { tags: ['vip'] }), { failing: true, runtimeMs: 4 }),
          more.failed('default', payload('f-1', { tags: ['vip'] }), 'RuntimeException: no'),
          // Completions after a failure, and several of one queue and class: the batch writes
          // their lists and metrics together, to the same end as one step each.
          more.deleted('default', payload('g-1'), { runtimeMs: 0.33 }),
          more.deleted('default', payload('g-2', { displayName: 'App\\Jobs\\Y' }), { runtimeMs: 2.5 }),
          more.deleted('default', payload('g-3'), { runtimeMs: 7.125 }),
          more.deleted('other', payload('g-4', { silenced: true }), { runtimeMs: 10 }),
          more.deleted('default', payload('g-5'), { runtimeMs: 0.01 }),
          // Names, ids and tags travel packed by their length in bytes: colons, digits, non-ASCII, nothing.
          more.deleted('mail:2', payload('g-6:7', { displayName: 'Zoë:3 ✓', tags: ['12:vip', 'é', ''] }), { runtimeMs: 1.5 }),
          more.released('default', payload('r-1')),
          more.migrated('default', [payload('m-1'), payload('m-2', { displayName: 'Zoë\u0000' })]),
        ]);
        // A tag's failed set expires by Redis's clock (EXPIRE, as Horizon's), not the recorder's:
        // only that it expires is compared, since a second may turn between the two writes.
        states.push((await stateUnder(p)).map((k) => (k.key.startsWith('laravel_horizon:failed:') ? { ...k, ttl: Math.sign(k.ttl) } : k)));
      }
      expect(states[0]!.length, 'keys written').toBeGreaterThan(4);
      expect(states[1], 'batched, as one step per record').toEqual(states[0]);
    });

  it("the queue's steps write what the recorder's steps write for reserves, a release, a give-back and a migration", async () => {
    const now = Math.floor(Date.now() / 1000) + 0.5;
    const clock = () => now;
    // Keyed as Horizon's JobPayload::id() reads it: uuid ?? id, as PHP prints it.
    const pushed = [
      jobPayload('s-1'),
      jobPayload('s-2'),
      jobPayload('s-3', { uuid: null, id: 'plain-3' }),
      jobPayload('s-4', { uuid: 7, id: 44 }),
    ];
    const states = await bothWays('moves', async (steps, p, client) => {
      const more = new HorizonRecorder(horizonClient, { prefix: p, clock });
      const moved: string[] = [];
      const q = new RedisQueue(client, {
        retryAfter: 90,
        ...(steps ? { horizon: more.queueRecords() } : { onMigrated: (_name, payloads) => moved.push(...payloads) }),
      });
      for (const job of pushed) {
        await q.pushRaw(job);
        await more.pushed('default', job);
      }
      const taken = await q.popMany('default', 4);
      expect(taken.length, 'jobs reserved').toBe(4);
      if (!steps) for (const job of taken) await more.reserved('default', job.reserved);
      await q.release(taken[0]!, 0);
      if (!steps) await more.released('default', taken[0]!.reserved);
      await q.giveBack(taken[1]!, 0);
      if (!steps) await more.released('default', taken[1]!.raw);
      // Both are due at once: the next reserve moves them back (JobsMigrated) and takes one again.
      const again = await q.popMany('default', 1);
      expect(again.length, 'jobs reserved again').toBe(1);
      if (!steps) {
        await more.migrated('default', moved);
        await more.reserved('default', again[0]!.reserved);
      }
    });
    const statuses = statusesOf(states[1]);
    expect(statuses, "each job's status after the moves").toEqual({
      'laravel_horizon:s-1': 'reserved',
      'laravel_horizon:s-2': 'pending',
      'laravel_horizon:plain-3': 'reserved',
      'laravel_horizon:7': 'reserved',
    });
    expect(states[1], "the queue's steps, as the recorder's").toEqual(states[0]);
  });

  it("the queue's deletes write what the recorder writes for a turn's completions, and remove a failing job for the recorder's records", async () => {
    const now = Math.floor(Date.now() / 1000) + 0.75;
    const clock = () => now;
    const pushed = [
      jobPayload('d-1'),
      jobPayload('d-2', { tags: ['vip', 'x'], retry_of: 'old-1' }),
      jobPayload('d-3', { silenced: true }),
      jobPayload('d-4', { displayName: 'App\\Jobs\\Y' }),
      jobPayload('d-5', { tags: ['vip'] }),
      jobPayload('d-7', { uuid: 7, id: 70 }),
    ];
    const endings = [
      { runtimeMs: 1.5 },
      { runtimeMs: 2.25 },
      { runtimeMs: 3 },
      { runtimeMs: 0.125 },
      { failing: true },
      { runtimeMs: 1e21 },
    ];
    const states = await bothWays('deletes', async (steps, p, client) => {
      const more = new HorizonRecorder(horizonClient, { prefix: p, clock, batch: true });
      await raw.sadd(`${p}monitoring`, 'vip');
      await raw.hset(`${p}old-1`, 'retried_by', JSON.stringify([{ id: 'd-2', status: 'pending', retried_at: 1 }]));
      const q = new RedisQueue(client, { retryAfter: 90, ...(steps ? { horizon: more.queueRecords() } : {}) });
      for (const job of pushed) {
        await q.pushRaw(job);
        await more.pushed('default', job);
      }
      const taken = await q.popMany('default', pushed.length);
      expect(
        taken.map((job) => horizonIdOf(job)),
        'jobs reserved, in order',
      ).toEqual(['d-1', 'd-2', 'd-3', 'd-4', 'd-5', '7']);
      if (!steps) for (const job of taken) await more.reserved('default', job.reserved);
      // One turn: the queue sends the deletes as one step.
      await Promise.all(taken.map((job, i) => q.deleteReserved(job, endings[i])));
      for (const [i, job] of taken.entries()) {
        const ending = endings[i]!;
        // The failing delete's records are the recorder's either way (the worker writes them with the failure).
        if (ending.failing) await more.deleted('default', job.reserved, { failing: true });
        else if (!steps) await more.deleted('default', job.reserved, { runtimeMs: ending.runtimeMs });
      }
      expect(await client.zcard('queues:default:reserved'), 'jobs left reserved').toBe(0);
    });
    const statuses = statusesOf(states[1]);
    expect(statuses, "each job's status after the deletes").toEqual({
      'laravel_horizon:d-1': 'completed',
      'laravel_horizon:d-2': 'completed',
      'laravel_horizon:d-3': 'completed',
      'laravel_horizon:d-4': 'completed',
      'laravel_horizon:d-5': 'completed',
      'laravel_horizon:7': 'completed',
    });
    expect(states[1], "the queue's delete step, as the recorder's steps").toEqual(states[0]);
  });

  it('pushedOnce writes what a push and then pushed() write, now and delayed; a second send of it writes nothing', async () => {
    const run = randomBytes(3).toString('hex');
    const now = Math.floor(Date.now() / 1000) + 0.25;
    const clock = () => now;
    const states: Awaited<ReturnType<typeof dumpState>>[] = [];
    for (const combined of [false, true]) {
      const app = `${base}once-${run}-${combined ? 'one' : 'two'}-app:`;
      const p = `${base}once-${run}-${combined ? 'one' : 'two'}-hz:`;
      const client = prefixedClient(app);
      const own = new RedisQueue(client, { defaultQueue: 'default', retryAfter: 90 });
      const more = new HorizonRecorder(horizonClient, { prefix: p, clock, silenced: [] });
      await raw.sadd(`${p}monitoring`, 'vip');
      // The step's strings travel packed by their length in bytes: a name, queue and tags with
      // colons, digits, non-ASCII, a NUL and nothing at all must come out as they went in.
      const jobs = [
        { id: 'o-1', due: '' as const, tags: ['vip', 'x'], queue: 'default', name: 'App\\Jobs\\X' },
        { id: 'o-2', due: Math.floor(now) + 300, tags: [], queue: 'default', name: 'App\\Jobs\\X' },
        { id: 'o-3:4', due: '' as const, tags: ['12:vip', 'é', '', 'a\u0000b', 'vip'], queue: 'mail:2', name: 'Zoë:3 ✓\u0000' },
      ];
      for (const { id, due, tags, queue, name } of jobs) {
        const payload = more.prepare(JSON.stringify({ uuid: id, displayName: name, job: 'x', data: {}, attempts: 0 }), { tags });
        if (!combined) {
          if (due === '') await own.pushRaw(payload, queue);
          else await client.zadd(`queues:${queue}:delayed`, due, payload);
          await more.pushed(queue, payload);
          continue;
        }
        const push = { keys: own.pushOnceKeys(id, queue, { prefixed: true }), payload, due, markerMs: 60_000 };
        expect(await more.pushedOnce(queue, push), `${id}: the first send pushes`).toBe(true);
        const before = await dumpState(raw, app, p, 'at');
        expect(await more.pushedOnce(queue, push), `${id}: the second send finds the marker`).toBe(false);
        expect(await dumpState(raw, app, p, 'at'), `${id}: nothing more written by the second send`).toEqual(before);
      }
      // The push's marker is the one key the combined step adds; the rest must be the same.
      const state = (await dumpState(raw, app, p)).filter((k) => !k.key.startsWith('laravel_database_lqb-pushed:'));
      states.push(state.map((k) => ({ ...k, ttl: Math.sign(k.ttl) })));
      client.disconnect();
    }
    const written = states[0]!.map((k) => k.key);
    expect(written, `keys written: ${written.join(', ')}`).toContain('laravel_horizon:o-1');
    expect(written, `keys written: ${written.join(', ')}`).toContain('laravel_horizon:o-3:4');
    expect(written, `keys written: ${written.join(', ')}`).toContain('laravel_database_queues:mail:2');
    expect(states[1], 'one step: the push and the records the two steps leave').toEqual(states[0]);
  });

  it('marks every job a migration moved as pending, each with its own payload', async () => {
    const payloads = ['{"uuid":"m-1","id":"m-1","attempts":1}', '{"uuid":"m-2","id":"m-2","attempts":2}'];
    const more = new HorizonRecorder(horizonClient, { prefix });
    await more.migrated('default', payloads);
    for (const [i, id] of ['m-1', 'm-2'].entries()) {
      const record = await raw.hgetall(`${prefix}${id}`);
      expect(record.status, `${id} status`).toBe('pending');
      expect(record.payload, `${id} payload`).toBe(payloads[i]);
    }
  });

  it("stores an exception's context as PHP's json_encode writes it", async () => {
    const more = new HorizonRecorder(horizonClient, { prefix });
    const context = { user: 42, path: 'a/b', name: 'Zoë' };
    await more.failed('default', '{"uuid":"f-1","id":"f-1","displayName":"App\\\\Jobs\\\\X","tags":[]}', 'RuntimeException: no', {
      context,
    });
    const expected = JSON.parse(runPhpScript('horizon-values.php', JSON.stringify([context]), ['json'])) as string[];
    expect(await raw.hget(`${prefix}f-1`, 'context'), 'context').toBe(expected[0]);
    expect(await raw.hget(`${prefix}f-1`, 'exception'), 'exception').toBe('RuntimeException: no');
  });

  it("findFailed finds a failed record as Horizon's findFailed does: a hash with an id and the status failed", async () => {
    const more = new HorizonRecorder(horizonClient, { prefix });
    const payload = '{"uuid":"ff-1","id":"ff-1","displayName":"App\\\\Jobs\\\\X","tags":[],"attempts":1}';
    await more.failed('mail', payload, 'RuntimeException: no');
    expect(await more.findFailed('ff-1'), 'a failed record').toEqual({ id: 'ff-1', connection: 'redis', queue: 'mail', payload });
    await more.pushed('default', '{"uuid":"ff-2","id":"ff-2","displayName":"App\\\\Jobs\\\\X","tags":[]}');
    expect(await more.findFailed('ff-2'), 'a pending record').toBeUndefined();
    expect(await more.findFailed('ff-none'), 'no record').toBeUndefined();
  });

  it('retryId is Str::orderedUuid(): the time first, in 10 µs, then a version 4 UUID’s random part, as Laravel 8.83 makes it', () => {
    const [[before, theirs, after]] = JSON.parse(runPhpScript('horizon-values.php', '[0]', ['ordered-uuid'])) as [[number, string, number]];
    const layout = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(theirs, 'PHP’s layout').toMatch(layout);
    const timeOf = (uuid: string) => parseInt(uuid.replace(/-/g, '').slice(0, 12), 16);
    // PHP's own: its time part lies between the times read just before and after it was made.
    expect(timeOf(theirs)).toBeGreaterThanOrEqual(Math.floor(before * 1e5) - 1);
    expect(timeOf(theirs)).toBeLessThanOrEqual(Math.ceil(after * 1e5));
    const ours = new HorizonRecorder(horizonClient, { prefix, clock: () => before }).retryId();
    expect(ours, 'ours').toMatch(layout);
    expect(Math.abs(timeOf(ours) - timeOf(theirs)), 'the same clock, the same units').toBeLessThanOrEqual(
      Math.ceil((after - before) * 1e5) + 1,
    );
    const later = new HorizonRecorder(horizonClient, { prefix, clock: () => before + 0.001 }).retryId();
    expect([later, ours].sort(), 'a later retry sorts after').toEqual([ours, later]);
  });

  it('a retry that fails turns its entry in retried_by failed, as Horizon’s completed(…, failed: true) does', async () => {
    const more = new HorizonRecorder(horizonClient, { prefix });
    const failed = '{"uuid":"rf-1","id":"rf-1","displayName":"App\\\\Jobs\\\\X","tags":[],"attempts":1,"pushedAt":"1795636600.5"}';
    await more.failed('default', failed, 'RuntimeException: first');
    const retryId = more.retryId();
    const payload = more.prepare(more.retryPayload(failed, 'rf-1', retryId), { raw: true });
    expect(JSON.parse(payload), 'the retry’s payload').toMatchObject({ id: retryId, uuid: retryId, attempts: 0, retry_of: 'rf-1' });
    await more.pushed('default', payload);
    await more.retried('rf-1', retryId);
    const entry = (status: string) => new RegExp(`^\\[\\{"id":"${retryId}","status":"${status}","retried_at":\\d+\\}\\]$`);
    expect(await raw.hget(`${prefix}rf-1`, 'retried_by'), 'retried_by after the retry').toMatch(entry('pending'));
    await more.reserved('default', payload);
    await more.deleted('default', payload, { failing: true });
    expect(await raw.hget(`${prefix}rf-1`, 'retried_by'), 'retried_by after the retry failed').toMatch(entry('failed'));
    await more.failed('default', payload, 'RuntimeException: again');
    expect(await raw.hget(`${prefix}${retryId}`, 'status'), 'the retry’s own record').toBe('failed');
    expect(await raw.hget(`${prefix}rf-1`, 'status'), 'the first record').toBe('failed');
  });
});
