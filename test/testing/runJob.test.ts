/**
 * runJob(): one payload real Laravel made, run by the worker's own code with no Redis and no
 * database, says what became of it. Each outcome is checked on a payload of Laravel 8.83's
 * (fixtures/laravel/payloads.jsonl) or 12.67/13.26's (unique-12-13.jsonl), and the whole set is
 * run differentially: every payload, under handlers that finish, release and throw, gives the
 * same outcome, the same events and the same pushed payloads (the chain's next link) through
 * runJob as through a real Worker reserving it from real Redis.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { Encrypter, commandOf, decodePayload } from '../../src/laravel/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { fakeQueue, runJob, type RunJobResult } from '../../src/testing/index.js';
import { describePushed } from '../../src/testing/fakeQueue.js';
import { Worker } from '../../src/worker/Worker.js';
import { DatabaseBatchRepository } from '../../src/worker/BatchRepository.js';
import { databaseConfig, openDatabase } from '../../src/database/index.js';
import { JOB_BATCHES_TABLE } from '../../src/testing/runJob.js';
import { handlerNames, type HandlerMap } from '../../src/worker/handlers.js';
import type { WorkerEvent } from '../../src/worker/types.js';
import { root } from '../helpers/php.js';
import { debianPayloads, laravel13Payloads, versionPayloads, type PayloadRecord } from '../helpers/laravel.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { uniqueRecords } from '../helpers/unique-fixtures.js';

type Fixture = Pick<PayloadRecord, 'name' | 'laravel' | 'queue' | 'payload' | 'appKey' | 'cipher'> & { name: string };

const fixtures = debianPayloads() as Fixture[];
const fixture = (name: string) => fixtures.find((record) => record.name === name)!;
/** The events about the job itself, in order (not a start's warnings, nor the stop). */
const JOB_EVENTS = new Set(['processing', 'processed', 'failed', 'released', 'deleted', 'given-back', 'timed-out']);
const jobEvents = (events: WorkerEvent[]) => events.map((event) => event.event).filter((name) => JOB_EVENTS.has(name));
const keyOf = (record: Fixture) => (record.appKey ? { key: record.appKey, cipher: record.cipher! } : {});

/** The handler keys the worker looks a payload up under (class, listener@method, notification@channel, …). */
function keysOf(record: Fixture): string[] {
  const decoded = decodePayload(record.payload);
  const encrypter = record.appKey ? new Encrypter(record.appKey, record.cipher) : undefined;
  return handlerNames(decoded, commandOf(decoded, encrypter).view);
}

/** One handler under every key the payload may be looked up by. */
const handle = (record: Fixture, handler: HandlerMap[string]): HandlerMap =>
  Object.fromEntries(keysOf(record).map((key) => [key, handler]));

describe('runJob says what became of a job Laravel 8.83 pushed', () => {
  it('completed: the handler returned, nothing pushed, no failed() hook', async () => {
    const record = fixture('job/queue-push');
    const seen: unknown[] = [];
    const result = await runJob(
      handle(record, (job) => void seen.push(job.command.podcastId)),
      record.payload,
    );
    expect(result.outcome, 'outcome').toBe('completed');
    expect(seen, 'the command the handler read (podcastId)').toEqual([1]);
    expect(result.dispatched, 'pushed').toEqual([]);
    expect(result.failedHookRan, 'failed() hook ran').toBe(false);
    expect(jobEvents(result.events), 'the job’s events').toEqual(['processing', 'processed']);
  });

  it('released with its delay; deleted by the handler; given back when no handler takes it', async () => {
    const record = fixture('job/queue-push');
    const released = await runJob(
      handle(record, (job) => job.release(7)),
      record.payload,
    );
    expect([released.outcome, released.delay], 'release(7): outcome and delay').toEqual(['released', 7]);
    const deleted = await runJob(
      handle(record, (job) => job.delete()),
      record.payload,
    );
    expect(deleted.outcome, 'delete(): outcome').toBe('deleted');
    const givenBack = await runJob({ 'App\\Jobs\\SomethingElse': () => undefined }, record.payload);
    expect(givenBack.outcome, 'no handler, share on: outcome').toBe('given-back');
    const noShare = await runJob({ 'App\\Jobs\\SomethingElse': () => undefined }, record.payload, { share: false });
    expect(noShare.outcome, 'no handler, share off: outcome').toBe('failed');
    expect(noShare.error?.message, 'no handler, share off: the failure').toMatch(/no handler for App\\Jobs\\ProcessPodcast/);
  });

  it('failed: the exception as failed_jobs holds it, and the failed() hook ran', async () => {
    const record = fixture('job/queue-push');
    const hooked: string[] = [];
    const result = await runJob(
      handle(
        record,
        Object.assign(
          () => {
            throw new Error('the podcast is gone');
          },
          { failed: (_job: unknown, error: unknown) => void hooked.push((error as Error).message) },
        ),
      ),
      record.payload,
      { tries: 1 },
    );
    expect(result.outcome, 'outcome').toBe('failed');
    expect(result.error?.message, 'error message').toContain('the podcast is gone');
    expect(result.error?.exception, 'failed_jobs exception: a PHP-style first line').toMatch(/^Error: the podcast is gone/);
    expect(result.failedHookRan, 'failed() hook ran').toBe(true);
    expect(hooked, 'what the hook was given').toEqual(['the podcast is gone']);
  });

  it('released by the rules when attempts are left: a throw with tries 3 at attempt 1', async () => {
    const record = fixture('job/queue-push');
    const result = await runJob(
      handle(record, () => {
        throw new Error('try again');
      }),
      record.payload,
      { tries: 3, attempts: 1 },
    );
    expect([result.outcome, result.delay, result.failedHookRan], 'outcome, delay, hook').toEqual(['released', 0, false]);
    const last = await runJob(
      handle(record, () => {
        throw new Error('try again');
      }),
      record.payload,
      { tries: 3, attempts: 3 },
    );
    expect(last.outcome, 'at its third attempt of 3: outcome').toBe('failed');
  });

  it('timed out: a handler past --timeout', async () => {
    const record = fixture('job/queue-push');
    const result = await runJob(
      handle(record, () => sleep(5000)),
      record.payload,
      { timeout: 1, tries: 1 },
    );
    expect(result.outcome, 'outcome').toBe('timed-out');
  }, 15_000);

  it('a chain’s next link: pushed as Laravel’s worker pushes it, to the chain’s queue', async () => {
    const record = fixture('chain/queueable');
    const result = await runJob(
      handle(record, () => undefined),
      record.payload,
      { queue: record.queue },
    );
    expect(result.outcome, 'outcome').toBe('completed');
    expect(result.dispatched.length, 'links pushed').toBe(1);
    const next = result.dispatched[0]!;
    // What the first link says is chained after it, read off Laravel's payload.
    const chained = describePushed({ payload: record.payload, queue: record.queue }).chained;
    expect(chained.length, 'links chained in Laravel’s payload').toBeGreaterThan(0);
    expect([next.name, next.chained], 'the next link’s class, and the links chained after it').toEqual([chained[0], chained.slice(1)]);
  });

  it('an encrypted command, read with the app’s APP_KEY', async () => {
    const record = fixture('encrypted/cbc');
    const seen: unknown[] = [];
    const result = await runJob(
      handle(record, (job) => void seen.push(job.command)),
      record.payload,
      keyOf(record),
    );
    expect(result.outcome, 'outcome').toBe('completed');
    expect(seen.length, 'commands read').toBe(1);
    expect(typeof seen[0], 'the command decrypted').toBe('object');
    const withoutKey = await runJob(
      handle(record, () => undefined),
      record.payload,
    );
    expect(withoutKey.outcome, 'without APP_KEY, share on: left for PHP').toBe('given-back');
  });
});

describe('runJob on a batch’s job, laid out as Bus::batch lays it out (fakeQueue)', () => {
  const BATCHED = 'App\\Jobs\\ImportRow';
  it('counts a success and a failure in the batch’s row as Laravel’s worker does', async () => {
    const fake = await fakeQueue();
    await fake.batch(
      [1, 2, 3].map((row) => ({ job: BATCHED, props: { row } })),
      { name: 'import' },
    );
    const [first, second] = fake.dispatched(BATCHED);
    const batch = { totalJobs: 3, pendingJobs: 3 };
    const done = await runJob({ [BATCHED]: () => undefined }, first!.payload, { batch });
    expect([done.outcome, done.batch?.pendingJobs, done.batch?.failedJobs], 'a success: outcome, pending, failed').toEqual([
      'completed',
      2,
      0,
    ]);
    const failed = await runJob(
      {
        [BATCHED]: () => {
          throw new Error('row 2 is bad');
        },
      },
      second!.payload,
      { batch, tries: 1 },
    );
    const uuid = JSON.parse(second!.payload).uuid as string;
    expect(
      [failed.outcome, failed.batch?.pendingJobs, failed.batch?.failedJobs, failed.batch?.failedJobIds],
      'a failure: outcome, pending, failed, failed ids',
    ).toEqual(['failed', 3, 1, [uuid]]);
    expect(failed.batch?.cancelledAt, 'a failure cancels a batch that does not allow failures').not.toBeNull();
  });
});

describe('runJob on unique jobs Laravel 12.67 and 13.26 pushed', () => {
  const records = uniqueRecords().filter((record) => record.lock !== null);
  it.each(records.map((record) => [`${record.laravel} ${record.class}`, record] as const))(
    '%s: its lock released once it completed',
    async (_, record) => {
      const result = await runJob({ [record.class]: () => undefined }, record.payload);
      expect(result.outcome, 'outcome').toBe('completed');
      expect(
        result.locksReleased.some((key) => record.lock!.key.endsWith(key)),
        `a released key is the end of the lock Laravel took (${record.lock!.key}); released: ${JSON.stringify(result.locksReleased)}`,
      ).toBe(true);
    },
  );
});

// ---- differential: runJob against a real Worker on real Redis ----

const prefix = uniquePrefix('runjob-diff');
afterAll(async () => {
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

type Behaviour = 'finishes' | 'releases' | 'throws' | 'throws, with failed()' | 'throws, attempts left';
/** Each behaviour's handler; `hooked` counts the failed() hook's runs, whichever side ran it. */
const hooked = { runs: 0 };
const behaviours: Record<Behaviour, HandlerMap[string]> = {
  finishes: () => undefined,
  releases: (job) => job.release(4),
  throws: () => {
    throw new Error('differential failure');
  },
  // With --tries=3 at its first attempt: released by the rules, after the payload's backoff.
  'throws, attempts left': () => {
    throw new Error('differential failure, retried');
  },
  'throws, with failed()': Object.assign(
    () => {
      throw new Error('differential failure, hooked');
    },
    { failed: () => void hooked.runs++ },
  ),
};

/** Every other set of payloads real Laravel made: 5.8 to 12 and 13 (fixtures/laravel/versions-*), 12.67/13.26's through lqb fixtures, unique jobs of 12.67 and 13.26. */
function otherVersions(): Fixture[] {
  const versions = [...versionPayloads(), ...laravel13Payloads()].map((record, i) => ({
    name: `${record.laravel} #${i}`,
    laravel: record.laravel,
    queue: record.queue.replace(/[{}]/g, ''),
    payload: record.payload,
  }));
  // What lqb fixtures made on real 12.67 and 13.26 apps for every job and listener class lqb port moved (php-fixture-gen/live/port-live.ts).
  const ported = readFileSync(join(root, 'fixtures/laravel/port-12-13.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { laravel: string; class: string; payload: string })
    .map((record) => ({
      name: `${record.laravel} ${record.class} (lqb fixtures)`,
      laravel: record.laravel,
      queue: 'default',
      payload: record.payload,
    }));
  const unique = uniqueRecords().map((record) => ({
    name: `${record.laravel} ${record.kind}`,
    laravel: record.laravel,
    queue: 'default',
    payload: record.payload,
  }));
  return [...versions, ...ported, ...unique];
}

const mask = (payload: string) => JSON.stringify({ ...JSON.parse(payload), uuid: 'UUID', id: 'ID' });

/** The same payload through a Worker reserving it from Redis: the outcome read from Redis and the worker's events. */
async function viaRedis(record: Fixture, handlers: HandlerMap, run: number, tries = 1, timeout?: number) {
  const client = prefixedClient(prefix);
  const queueName = `${record.queue}-${run}`;
  const queue = new RedisQueue(client, { defaultQueue: queueName, retryAfter: 90 });
  const events: WorkerEvent[] = [];
  let error: string | undefined;
  try {
    await queue.pushRaw(record.payload, queueName);
    const encrypter = record.appKey ? new Encrypter(record.appKey, record.cipher) : undefined;
    const worker = new Worker(
      queue,
      handlers,
      {
        queues: [queueName],
        once: true,
        sleep: 0,
        memory: 0,
        concurrency: 1,
        handleSignals: false,
        tries,
        ...(timeout ? { timeout } : {}),
      },
      {
        failer: false,
        onFailed: (job) => void (error = job.exception.split('\n')[0]),
        ...(encrypter ? { encrypter } : {}),
        log: (event) => void events.push(event),
      },
    );
    await worker.run();
    const raw = rawClient();
    try {
      const delayed = await raw.zrange(`${prefix}queues:${queueName}:delayed`, 0, -1, 'WITHSCORES');
      const said = new Set(events.map((event) => event.event));
      const outcome: RunJobResult['outcome'] = said.has('timed-out')
        ? 'timed-out'
        : said.has('failed')
          ? 'failed'
          : said.has('given-back')
            ? 'given-back'
            : said.has('released')
              ? 'released'
              : said.has('deleted')
                ? 'deleted'
                : 'completed';
      const delay = delayed.length === 2 ? Math.round(Number(delayed[1]) - Date.now() / 1000) : undefined;
      // What the job pushed (its chain's next link) is on a queue's list: every list the run left.
      const lists = (await raw.keys(`${prefix}queues:*`)).filter((key) => !/:(delayed|reserved|notify)$/.test(key));
      const pushed: string[] = [];
      for (const key of lists) pushed.push(...(await raw.lrange(key, 0, -1)));
      const left = await raw.keys(`${prefix}queues:*`);
      if (left.length > 0) await raw.del(...left);
      return { outcome, delay: outcome === 'released' || outcome === 'given-back' ? delay : undefined, pushed, error, events };
    } finally {
      raw.disconnect();
    }
  } finally {
    client.disconnect();
  }
}

/** runJob and a Worker on Redis, on the same payload and handler: compared on what each can see. */
async function sameOutcome(record: Fixture, how: Behaviour | 'runs past --timeout', run: number): Promise<void> {
  const handlers = handle(record, how === 'runs past --timeout' ? () => sleep(3000) : behaviours[how]);
  hooked.runs = 0;
  const tries = how === 'throws, attempts left' ? 3 : 1;
  const timeout = how === 'runs past --timeout' ? 1 : undefined;
  const mine = await runJob(handlers, record.payload, {
    ...keyOf(record),
    queue: `${record.queue}-${run}`,
    tries,
    ...(timeout ? { timeout } : {}),
  });
  const hookedByRunJob = hooked.runs;
  hooked.runs = 0;
  const real = await viaRedis(record, handlers, run, tries, timeout);
  // What both are compared on: the outcome, the delay, the events' names, the payloads pushed
  // (ids masked, in any order), the failure's first line, whether failed() ran.
  const ours = {
    outcome: mine.outcome,
    delay: mine.delay,
    events: jobEvents(mine.events),
    pushed: mine.dispatched.map((pushed) => mask(pushed.payload)).sort(),
    error: mine.error?.message,
    hooked: mine.failedHookRan,
  };
  const theirs = { ...real, events: jobEvents(real.events), pushed: real.pushed.map(mask).sort(), hooked: hooked.runs > 0 };
  // A delay read back from Redis's score (whole seconds) may be a second off the one given.
  if (ours.delay !== undefined && theirs.delay !== undefined && Math.abs(ours.delay - theirs.delay) <= 1) theirs.delay = ours.delay;
  expect(ours, `${record.name}, a handler that ${how}: runJob (left) against a Worker on Redis`).toEqual(theirs);
  expect(hookedByRunJob > 0, `${record.name}, a handler that ${how}: the hook ran under runJob as runJob says`).toBe(mine.failedHookRan);
}

describe('runJob and a Worker on Redis give the same outcome on every payload Laravel 8.83 made', () => {
  let run = 0;
  const cases = fixtures.flatMap((record) => (Object.keys(behaviours) as Behaviour[]).map((how) => [record.name, how, record] as const));
  it.each(cases)('%s, a handler that %s', (_, how, record) => sameOutcome(record, how, ++run));
});

describe('runJob and a Worker on Redis give the same outcome on the payloads of Laravel 5.8 to 13 and 12/13’s unique jobs', () => {
  let run = 10_000;
  const cases = otherVersions().flatMap((record) =>
    (['finishes', 'releases', 'throws, with failed()', 'throws, attempts left'] as Behaviour[]).map(
      (how) => [record.name, how, record] as const,
    ),
  );
  it.each(cases)('%s, a handler that %s', (_, how, record) => sameOutcome(record, how, ++run));
});

describe('runJob and a Worker on Redis give the same outcome when a handler runs past --timeout', () => {
  let run = 20_000;
  const cases = ['job/queue-push', 'chain/queueable', 'encrypted/cbc'].map((name) => [name, fixture(name)] as const);
  it.each(cases)('%s', (_, record) => sameOutcome(record, 'runs past --timeout', ++run), 20_000);
});

describe('runJob and a Worker on Redis count a batch’s job alike', () => {
  const BATCHED = 'App\\Jobs\\ImportRow';
  it.each(['finishes', 'throws'] as const)('a batch’s job whose handler %s', async (how) => {
    const fake = await fakeQueue();
    await fake.batch(
      [1, 2, 3].map((row) => ({ job: BATCHED, props: { row } })),
      { name: 'import' },
    );
    const [first] = fake.dispatched(BATCHED);
    const handlers: HandlerMap = { [BATCHED]: behaviours[how] };
    const mine = await runJob(handlers, first!.payload, { batch: { totalJobs: 3, pendingJobs: 3 }, tries: 1 });
    // The Worker's: the same row in a job_batches table on SQLite, the job reserved from Redis.
    const dir = mkdtempSync(join(tmpdir(), 'lqb-runjob-batch-'));
    const db = openDatabase(databaseConfig(join(dir, 'batches.sqlite')));
    const client = prefixedClient(prefix);
    try {
      await db.query(JOB_BATCHES_TABLE);
      const batchId = first!.batchId!;
      await db.query(
        'insert into job_batches (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, cancelled_at, created_at, finished_at) values (?, ?, 3, 3, 0, ?, ?, null, ?, null)',
        [batchId, 'import', '[]', 'a:0:{}', Math.floor(Date.now() / 1000)],
      );
      const queueName = `batch-${how}`;
      const queue = new RedisQueue(client, { defaultQueue: queueName, retryAfter: 90 });
      await queue.pushRaw(first!.payload, queueName);
      const events: WorkerEvent[] = [];
      const worker = new Worker(
        queue,
        handlers,
        { queues: [queueName], once: true, sleep: 0, memory: 0, concurrency: 1, handleSignals: false, tries: 1 },
        { failer: false, onFailed: () => undefined, batches: new DatabaseBatchRepository(db), log: (event) => void events.push(event) },
      );
      await worker.run();
      const [row] = (await db.query<Record<string, unknown>>('select * from job_batches where id = ?', [batchId])).rows;
      const theirs = {
        events: jobEvents(events),
        pendingJobs: Number(row?.pending_jobs),
        failedJobs: Number(row?.failed_jobs),
        failedJobIds: JSON.parse(String(row?.failed_job_ids)) as string[],
        cancelled: row?.cancelled_at !== null,
        finished: row?.finished_at !== null,
      };
      const ours = {
        events: jobEvents(mine.events),
        pendingJobs: mine.batch?.pendingJobs,
        failedJobs: mine.batch?.failedJobs,
        failedJobIds: mine.batch?.failedJobIds,
        cancelled: mine.batch?.cancelledAt !== null,
        finished: mine.batch?.finishedAt !== null,
      };
      expect(ours, `a batch’s job whose handler ${how}: runJob (left) against a Worker with job_batches on SQLite`).toEqual(theirs);
    } finally {
      client.disconnect();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
