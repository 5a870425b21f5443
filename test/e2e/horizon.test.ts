/**
 * Horizon sees the Node side, on real Redis:
 *   - Laravel 8.83 pushes (php-fixture-gen/laravel-dispatch.php), `lqb work --horizon` runs:
 *     Horizon's job records, completed and failed lists and metrics follow;
 *   - `lqb dispatch --horizon` and `connect({ horizon })` push: Horizon's pending record, laid
 *     out as Horizon's queue writes it, then `lqb work --horizon` completes or fails it;
 *   - the worker shows on the dashboard as a supervisor while it runs, and obeys its commands.
 * Records are compared with the fixtures Horizon 5.22.1 wrote (fixtures/horizon/), by their
 * fields and key kinds: the values differ by the jobs, the times and Node's exception text.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, beforeEach, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { buildJob, buildModelIdentifier, buildPayload, connect } from '../../src/index.js';
import { fromJS, serialize } from '../../src/php/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { HANDLERS, UNSHAPED_ONLY, lqb, scratchPerTest, type Scratch, laravelDispatch as pushedByLaravel } from '../helpers/processes.js';
import { root } from '../helpers/php.js';
import { prefixedClient, rawClient } from '../helpers/redis.js';
import { readHorizonFixtures, type FixtureLine } from '../horizon/fixtures.js';

const QUEUE = 'bridge';
const current = scratchPerTest('e2e-hz', QUEUE);
let prefix: string;
let s: Scratch;
/** Horizon's prefix: under the test's own prefix, so the scratch cleanup removes its keys too. */
let hz: string;
beforeEach(() => {
  ({ prefix, s } = current);
  hz = `${prefix}hz:`;
});

const RECORD = 'App\\Jobs\\Bridge\\RecordJob';
const FAILING = 'App\\Jobs\\Bridge\\FailingJob';

/** `lqb work --horizon` over the queue until it is empty, with more in its environment when given. */
const workWith = (env: Record<string, string>, ...flags: string[]) =>
  lqb(
    [
      'work',
      `--handlers=${HANDLERS}`,
      `--queue=${QUEUE}`,
      '--stop-when-empty',
      '--sleep=0',
      '--no-share',
      '--horizon',
      `--horizon-prefix=${hz}`,
      ...flags,
    ],
    { ...s.env, ...env },
  );
const work = (...flags: string[]) => workWith({}, ...flags);
const dispatch = async (className: string, props: object, ...flags: string[]) => {
  const result = await lqb(
    ['dispatch', className, `--props=${JSON.stringify(props)}`, `--queue=${QUEUE}`, '--horizon', `--horizon-prefix=${hz}`, ...flags],
    s.env,
  );
  expect(result.stderr, `lqb dispatch ${className}`).toBe(UNSHAPED_ONLY(className));
  return JSON.parse(result.stdout) as { uuid: string; id: string; queue: string };
};
const laravelDispatch = (kind: string, options: object) => pushedByLaravel(s.env, QUEUE, kind, options);

/** The fields of a hash the fixtures hold after a step, for the key whose name ends so. */
function fixtureFields(step: number, keyEnd: string): string[] {
  const line = readHorizonFixtures().find((l) => l.step === step) as FixtureLine;
  const key = line.after.find((k) => k.key.endsWith(keyEnd));
  if (!key) throw new Error(`fixture step ${step} has no key ending ${keyEnd}`);
  return Object.keys(key.value as object).sort();
}

const A = '00000000-0000-4000-8000-000000000001';
const C = '00000000-0000-4000-8000-000000000003';

async function withRaw<T>(use: (raw: Redis) => Promise<T>): Promise<T> {
  const raw = rawClient();
  try {
    return await use(raw);
  } finally {
    raw.disconnect();
  }
}

const members = (raw: Redis, key: string) => raw.zrange(key, 0, -1);

describe('Laravel 8.83 pushes, lqb work --horizon runs', () => {
  it('each job done is completed in Horizon, its queue and class measured; a failure is in failed_jobs with its exception', async () => {
    const pushed = await laravelDispatch('record', { n: 1, count: 2, label: 'ok' });
    const [failing] = await laravelDispatch('failing', { n: 9, message: 'cannot do it' });
    const result = await work('--tries=1');
    expect(result.status, result.stderr).toBe(0);
    await withRaw(async (raw) => {
      for (const job of pushed) {
        const record = await raw.hgetall(hz + job.uuid);
        expect(record.status, `job ${job.uuid}: status`).toBe('completed');
        expect(JSON.parse(record.payload!).attempts, `job ${job.uuid}: the reserved payload`).toBe(1);
        expect(Number(record.completed_at), `job ${job.uuid}: completed_at`).toBeGreaterThan(0);
        expect(await raw.ttl(hz + job.uuid), `job ${job.uuid}: trim.completed`).toBeGreaterThan(3500);
      }
      // The failure was completed by its delete, then taken off the list by its failure, as Horizon does.
      expect((await members(raw, `${hz}completed_jobs`)).sort()).toEqual(pushed.map((p) => p.uuid).sort());
      expect(await raw.smembers(`${hz}measured_jobs`)).toEqual([`${hz}job:${RECORD}`]);
      expect(await raw.smembers(`${hz}measured_queues`)).toEqual([`${hz}queue:${QUEUE}`]);
      const metrics = await raw.hgetall(`${hz}job:${RECORD}`);
      expect(Object.keys(metrics).sort(), 'job metrics: fields').toEqual(fixtureFields(4, 'job:App\\Jobs\\GenerateReport'));
      expect(metrics.throughput).toBe('2');
      expect(Number(metrics.runtime), 'job metrics: runtime in ms').toBeGreaterThanOrEqual(0);
      expect((await raw.hgetall(`${hz}queue:${QUEUE}`)).throughput, 'queue metrics: throughput').toBe('2');

      const failed = await raw.hgetall(hz + failing!.uuid);
      expect(failed.status, 'failing job: status').toBe('failed');
      expect(failed.exception, 'failing job: exception').toMatch(/^Error: cannot do it in /);
      expect(failed.context, 'failing job: context').toBe('');
      expect(await members(raw, `${hz}failed_jobs`)).toEqual([failing!.uuid]);
      expect(await members(raw, `${hz}recent_failed_jobs`)).toEqual([failing!.uuid]);
      expect(await raw.ttl(hz + failing!.uuid), 'failing job: trim.failed').toBeGreaterThan(600_000);
    });
  });
});

describe('lqb dispatch --horizon pushes, lqb work --horizon runs', () => {
  it('the push is Horizon’s pending record, then completed, field for field as Horizon’s own', async () => {
    const job = await dispatch(RECORD, { n: 3, label: 'from node' }, '--tries=1');
    expect(job.id, 'the id is the uuid under Horizon').toBe(job.uuid);
    await withRaw(async (raw) => {
      const pending = await raw.hgetall(hz + job.uuid);
      expect(Object.keys(pending).sort(), 'pending record: fields').toEqual(fixtureFields(2, A));
      expect(pending).toMatchObject({ id: job.uuid, connection: 'redis', queue: QUEUE, name: RECORD, status: 'pending' });
      const payload = JSON.parse(pending.payload!);
      expect(payload).toMatchObject({ id: job.uuid, uuid: job.uuid, type: 'job', tags: [], silenced: false });
      expect(typeof payload.pushedAt, 'payload: pushedAt').toBe('string');
      // The queue holds what Horizon's record holds.
      expect(await raw.lrange(`${prefix}queues:${QUEUE}`, 0, -1)).toEqual([pending.payload]);
      expect(await members(raw, `${hz}pending_jobs`)).toEqual([job.uuid]);
      expect(await members(raw, `${hz}recent_jobs`)).toEqual([job.uuid]);
    });
    expect((await work('--tries=1')).status).toBe(0);
    await withRaw(async (raw) => {
      const done = await raw.hgetall(hz + job.uuid);
      expect(Object.keys(done).sort(), 'completed record: fields').toEqual(fixtureFields(4, A));
      expect(done.status).toBe('completed');
      expect(await members(raw, `${hz}pending_jobs`), 'pending_jobs after the run').toEqual([]);
      expect(await members(raw, `${hz}completed_jobs`)).toEqual([job.uuid]);
    });
  });

  it('a Node failure is failed in Horizon with Node’s exception, as Horizon’s own failed record', async () => {
    const job = await dispatch(FAILING, { n: 1, message: 'node says no' }, '--tries=1');
    expect((await work('--tries=1')).status).toBe(0);
    await withRaw(async (raw) => {
      const failed = await raw.hgetall(hz + job.uuid);
      expect(Object.keys(failed).sort(), 'failed record: fields').toEqual(fixtureFields(14, C));
      expect(failed.status).toBe('failed');
      expect(failed.exception).toContain('node says no');
      expect(await members(raw, `${hz}failed_jobs`)).toEqual([job.uuid]);
      // Failed after the delete with failing, as Horizon does: not measured, not left completed.
      expect(await members(raw, `${hz}completed_jobs`)).toEqual([]);
      expect(await raw.exists(`${hz}job:${FAILING}`), 'a failed job is not measured').toBe(0);
    });
  });

  it('lqb retry --horizon ID retries a job Horizon holds a failed record of as Horizon’s Retry does: a new job retry_of it, pending in retried_by, then completed', async () => {
    const job = await dispatch(FAILING, { n: 2, message: 'first time' }, '--tries=1');
    expect((await work('--tries=1')).status).toBe(0);
    const retried = await lqb(['retry', job.uuid, '--horizon', `--horizon-prefix=${hz}`], s.env);
    expect(retried.status, retried.stderr).toBe(0);
    expect(retried.stdout.trim()).toBe(`The failed job [${job.uuid}] has been pushed back onto the queue!`);
    const retryId = await expectRetriedBy(job.uuid, 'pending', 19);
    await expectRetryPushed(retryId, job.uuid);
    expect((await lqb(['failed', '--json'], s.env)).stdout, 'failed_jobs forgets it, as queue:retry does').toBe('');
    const succeeding = await workWith({ LQB_NODE_FAILING_SUCCEEDS: '1' });
    expect(succeeding.status, succeeding.stderr).toBe(0);
    expect(await expectRetriedBy(job.uuid, 'completed', 21), 'the same entry').toBe(retryId);
    await withRaw(async (raw) => {
      const done = await raw.hgetall(hz + retryId);
      expect(done.status, 'the retry’s own record').toBe('completed');
      expect(JSON.parse(done.payload!).retry_of).toBe(job.uuid);
      expect(await raw.hget(hz + job.uuid, 'status'), 'the first job stays failed, as in Horizon').toBe('failed');
    });
  });

  it('a Horizon retry that fails again turns its retried_by entry failed, and is a failed job of its own (Laravel 8.83 pushed the first)', async () => {
    const [failing] = await laravelDispatch('failing', { n: 4, message: 'always' });
    expect((await work('--tries=1')).status).toBe(0);
    const retried = await lqb(['retry', 'all', '--horizon', `--horizon-prefix=${hz}`], s.env);
    expect(retried.status, retried.stderr).toBe(0);
    const retryId = await expectRetriedBy(failing!.uuid, 'pending', 19, { pushedByLaravel: true });
    await expectRetryPushed(retryId, failing!.uuid);
    expect((await work('--tries=1')).status).toBe(0);
    expect(await expectRetriedBy(failing!.uuid, 'failed', 21, { pushedByLaravel: true }), 'the same entry').toBe(retryId);
    await withRaw(async (raw) => {
      expect(await raw.hget(hz + retryId, 'status'), 'the retry’s own record').toBe('failed');
      expect((await members(raw, `${hz}failed_jobs`)).sort()).toEqual([failing!.uuid, retryId].sort());
    });
    const failed = JSON.parse((await lqb(['failed', '--json'], s.env)).stdout) as { id: string };
    expect(failed.id, 'failed_jobs holds the retry’s failure').toBe(retryId);
  });

  it('with --env naming an app with Horizon 5 installed, lqb retry retries as Horizon’s Retry without --horizon', async () => {
    const job = await dispatch(FAILING, { n: 5, message: 'once' }, '--tries=1');
    expect((await work('--tries=1')).status).toBe(0);
    writeFileSync(join(s.dir, '.env'), `REDIS_PREFIX=${prefix}\nHORIZON_PREFIX=${hz}\n`);
    mkdirSync(join(s.dir, 'vendor/composer'), { recursive: true });
    writeFileSync(
      join(s.dir, 'vendor/composer/installed.json'),
      JSON.stringify({ packages: [{ name: 'laravel/horizon', version: 'v5.22.1' }] }),
    );
    const retried = await lqb(['retry', job.uuid, `--env=${join(s.dir, '.env')}`], s.env);
    expect(retried.status, retried.stderr).toBe(0);
    await expectRetryPushed(await expectRetriedBy(job.uuid, 'pending', 19), job.uuid);
  });

  it('a failed job Horizon holds no record of (trimmed) goes back as queue:retry does under Horizon: pending again, then completed', async () => {
    const job = await dispatch(FAILING, { n: 2, message: 'first time' }, '--tries=1');
    expect((await work('--tries=1')).status).toBe(0);
    await withRaw((raw) => raw.del(hz + job.uuid));
    const retried = await lqb(['retry', 'all', '--horizon', `--horizon-prefix=${hz}`], s.env);
    expect(retried.status, retried.stderr).toBe(0);
    await withRaw(async (raw) => {
      const pending = await raw.hgetall(hz + job.uuid);
      expect(pending.status, 'the retried job: status').toBe('pending');
      expect(pending.retried_by, 'no retried_by: there was no failed record').toBeUndefined();
      const payload = JSON.parse(pending.payload!);
      expect(payload, 'the retried job: payload').toMatchObject({
        uuid: job.uuid,
        id: job.uuid,
        attempts: 0,
        type: 'job',
        silenced: false,
      });
      expect(payload.retry_of, 'not a Horizon retry').toBeUndefined();
      expect(await members(raw, `${hz}pending_jobs`)).toEqual([job.uuid]);
    });
    const succeeding = await workWith({ LQB_NODE_FAILING_SUCCEEDS: '1' });
    expect(succeeding.status, succeeding.stderr).toBe(0);
    expect(await withRaw((raw) => raw.hget(hz + job.uuid, 'status')), 'the retried job after its run').toBe('completed');
  });

  it('a chain’s next link, pushed by the Node worker, is pushed and recorded as Horizon’s queue pushes it', async () => {
    await laravelDispatch('record', { n: 1, chain: [{ n: 2, label: 'link', queue: QUEUE }] });
    expect((await work('--tries=1')).status).toBe(0);
    const link = s.nodeRuns().find((run) => run.props.n === 2);
    expect(link, 'the link ran').toBeDefined();
    expect(link!.jobId, 'the link’s id is its uuid, as Horizon’s queue makes it').toBe(link!.uuid);
    await withRaw(async (raw) => {
      const record = await raw.hgetall(hz + link!.uuid);
      expect(Object.keys(record).sort(), 'the link’s record: fields').toEqual(fixtureFields(4, A));
      expect(record.status).toBe('completed');
    });
  });

  it('a chain’s next link is tagged by the tags of the worker’s handler for its class, as Horizon calls the link’s tags()', async () => {
    await laravelDispatch('record', {
      n: 1,
      chain: [
        { n: 2, label: 'link', queue: QUEUE },
        { n: 3, label: 'last', queue: QUEUE },
      ],
    });
    const queue = await connect({ prefix, horizon: { prefix: hz } });
    const ran: { n: number; uuid: string }[] = [];
    const tagged: unknown[] = [];
    try {
      const handler = Object.assign(
        async (job: { command: Record<string, unknown>; uuid: string | undefined }) => {
          ran.push({ n: Number(job.command.n), uuid: job.uuid! });
        },
        {
          tags: (job: { name: string; command: Record<string, unknown> }) => {
            tagged.push({ name: job.name, n: job.command.n, label: job.command.label });
            return [`record:${String(job.command.n)}`, 'chained'];
          },
        },
      );
      await queue.worker({ [RECORD]: handler }, { queues: [QUEUE], stopWhenEmpty: true, sleep: 0, failer: false }).run();
    } finally {
      await queue.close();
    }
    expect(
      ran.map((r) => r.n),
      'the chain ran',
    ).toEqual([1, 2, 3]);
    // Called for each link Node pushed (the head was Laravel's push), with the link as it is pushed.
    expect(tagged).toEqual([
      { name: RECORD, n: 2, label: 'link' },
      { name: RECORD, n: 3, label: 'last' },
    ]);
    await withRaw(async (raw) => {
      for (const link of ran.slice(1)) {
        const record = await raw.hgetall(hz + link.uuid);
        expect(record.status, `link ${link.n}: status`).toBe('completed');
        expect(JSON.parse(record.payload!).tags, `link ${link.n}: its tags`).toEqual([`record:${link.n}`, 'chained']);
      }
    });
  });

  it('a link whose handler defines no tags is tagged by its models (Class:key); a handler’s tags replace the models’', async () => {
    const link = (className: string, id: number) =>
      Buffer.from(
        serialize(buildJob({ className, properties: { user: buildModelIdentifier({ class: 'App\\Models\\User', id }) } })),
      ).toString('utf8');
    const head = buildJob({ className: 'App\\Jobs\\Head', properties: {}, serializesModels: false });
    head.props.set('chainQueue', QUEUE);
    head.props.set('chained', fromJS([link('App\\Jobs\\Untagged', 42), link('App\\Jobs\\Tagged', 7)]));
    const queue = await connect({ prefix, horizon: { prefix: hz } });
    const uuids = new Map<string, string>();
    try {
      await queue.connection.pushRaw(buildPayload(head).raw, QUEUE);
      const seen = async (job: { name: string; uuid: string | undefined }) => void uuids.set(job.name, job.uuid!);
      const handlers = {
        'App\\Jobs\\Head': seen,
        'App\\Jobs\\Untagged': seen,
        'App\\Jobs\\Tagged': Object.assign(seen.bind(null), {
          tags: (job: { command: Record<string, unknown> }) => [`account:${String((job.command.user as { id: unknown }).id)}`],
        }),
      };
      await queue.worker(handlers, { queues: [QUEUE], stopWhenEmpty: true, sleep: 0, failer: false }).run();
    } finally {
      await queue.close();
    }
    await withRaw(async (raw) => {
      const tagsOf = async (name: string) => JSON.parse((await raw.hget(hz + uuids.get(name)!, 'payload'))!).tags as string[];
      expect(await tagsOf('App\\Jobs\\Untagged'), 'no tags function: the model’s tag').toEqual(['App\\Models\\User:42']);
      expect(await tagsOf('App\\Jobs\\Tagged'), 'the handler’s tags alone').toEqual(['account:7']);
    });
  });

  it('a link’s tags function that gives no list of strings fails the push, and so the job that finished, naming the handler', async () => {
    const [head] = await laravelDispatch('record', { n: 1, chain: [{ n: 2, label: 'link', queue: QUEUE }] });
    const queue = await connect({ prefix, horizon: { prefix: hz } });
    const ran: number[] = [];
    try {
      const handler = Object.assign(async (job: { command: Record<string, unknown> }) => void ran.push(Number(job.command.n)), {
        tags: () => 'billing' as unknown as string[],
      });
      await queue.worker({ [RECORD]: handler }, { queues: [QUEUE], stopWhenEmpty: true, sleep: 0, tries: 1, failer: false }).run();
    } finally {
      await queue.close();
    }
    expect(ran, 'the head ran, the link was never pushed').toEqual([1]);
    await withRaw(async (raw) => {
      const record = await raw.hgetall(hz + head!.uuid);
      expect(record.status, 'the head: failed').toBe('failed');
      expect(record.exception).toContain(`the tags function of ${RECORD}'s handler gave "billing", not a list of strings`);
      expect(await raw.llen(`${prefix}queues:${QUEUE}`), 'nothing pushed').toBe(0);
    });
  });

  it('a released job is pending again, then completed on its next attempt', async () => {
    const [flaky] = await laravelDispatch('flaky', { n: 7, failTimes: 1 });
    expect((await work('--tries=2', '--backoff=0')).status).toBe(0);
    await withRaw(async (raw) => {
      const record = await raw.hgetall(hz + flaky!.uuid);
      expect(record.status).toBe('completed');
      expect(JSON.parse(record.payload!).attempts, 'the second attempt’s payload').toBe(2);
      expect((await raw.hgetall(`${hz}job:App\\Jobs\\Bridge\\FlakyJob`)).throughput).toBe('1');
    });
  });
});

describe('migrations (JobsMigrated)', () => {
  it('the reserve step says which payloads it moved only to a queue that asks', async () => {
    const queue = await connect({ prefix, horizon: { prefix: hz } });
    const client = prefixedClient(prefix);
    try {
      await queue.dispatch(RECORD, { n: 1 }, { queue: QUEUE, delay: 1 });
      await new Promise((r) => setTimeout(r, 1100));
      const heard: [string, string[]][] = [];
      const asking = new RedisQueue(client, { onMigrated: (name, payloads) => heard.push([name, payloads]) });
      const [job] = await asking.popMany(QUEUE, 1);
      expect(
        heard.map(([name, payloads]) => [name, payloads.length]),
        'what the migration moved',
      ).toEqual([[QUEUE, 1]]);
      expect(JSON.parse(heard[0]![1][0]!).uuid).toBe(job!.uuid);
      await job!.delete();
    } finally {
      client.disconnect();
      await queue.close();
    }
  });
});

describe('lqb work --horizon and Horizon’s signals', () => {
  it('SIGUSR2 pauses (the dashboard says paused), SIGCONT continues, SIGTERM stops and takes it off the dashboard', async () => {
    const child = spawn(
      'node',
      [
        join(root, 'dist/cli/main.js'),
        'work',
        `--handlers=${HANDLERS}`,
        `--queue=${QUEUE}`,
        '--sleep=0.1',
        '--no-share',
        '--horizon',
        `--horizon-prefix=${hz}`,
      ],
      { env: s.env, stdio: 'ignore' },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const name = await waitForValue(() => withRaw(async (raw) => (await raw.zrange(`${hz}supervisors`, 0, -1))[0]), 'the supervisor');
      const status = () => withRaw((raw) => raw.hget(`${hz}supervisor:${name}`, 'status'));
      child.kill('SIGUSR2');
      await waitFor(async () => (await status()) === 'paused', 'paused after SIGUSR2');
      child.kill('SIGCONT');
      await waitFor(async () => (await status()) === 'running', 'running after SIGCONT');
      child.kill('SIGTERM');
      expect(await exited, 'exit status after SIGTERM').toBe(0);
      expect(await withRaw((raw) => raw.zrange(`${hz}supervisors`, 0, -1)), 'supervisors after the stop').toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('connect({ horizon })', () => {
  it('dispatch writes the pending record with the tags given, else the models’ tags', async () => {
    const queue = await connect({ prefix, horizon: { prefix: hz } });
    try {
      const tagged = await queue.dispatch(RECORD, { n: 1 }, { queue: QUEUE, tags: ['billing', 'customer:7'] });
      const user = buildModelIdentifier({ class: 'App\\Models\\User', id: 42 });
      const modelled = await queue.dispatch(RECORD, { n: 2, user }, { queue: QUEUE });
      // A tags function (a tags() method) is awaited; one that gives no list is refused before the push.
      const computed = await queue.dispatch(RECORD, { n: 4 }, { queue: QUEUE, tags: async (job) => [`n:${String(job.command.n)}`] });
      await expect(
        queue.dispatch(RECORD, { n: 5 }, { queue: QUEUE, tags: () => 'billing' as unknown as string[] }),
        'a tags function giving a string',
      ).rejects.toThrow('dispatch: tags gave "billing", not a list of strings');
      await withRaw(async (raw) => {
        expect(JSON.parse((await raw.hget(hz + computed.uuid!, 'payload'))!).tags, 'tags a function gave').toEqual(['n:4']);
        const pending = await raw.hgetall(hz + tagged.uuid!);
        expect(pending.status).toBe('pending');
        expect(JSON.parse(pending.payload!).tags, 'tags given').toEqual(['billing', 'customer:7']);
        expect(await raw.ttl(hz + tagged.uuid!), 'trim.pending').toBeGreaterThan(3500);
        expect(JSON.parse((await raw.hget(hz + modelled.uuid!, 'payload'))!).tags, 'the model’s tag').toEqual(['App\\Models\\User:42']);
      });
    } finally {
      await queue.close();
    }
  });

  it('a payload without a uuid (Laravel 5.8’s layout) is pushed, then recorded pending under its id', async () => {
    const queue = await connect({ prefix, horizon: { prefix: hz }, laravel: '5.8' });
    try {
      const pushed = await queue.dispatch(RECORD, { n: 3 }, { queue: QUEUE });
      expect(pushed.uuid, 'Laravel 5.8 payloads carry no uuid').toBeNull();
      await withRaw(async (raw) => {
        const pending = await raw.hgetall(hz + pushed.id!);
        expect(pending.status, `the pending record of ${pushed.id}`).toBe('pending');
        expect(pending.queue, 'its queue').toBe(QUEUE);
        expect(
          await raw.lpos(`${prefix}queues:${QUEUE}`, pending.payload!),
          'the payload it records is the one on the queue',
        ).not.toBeNull();
      });
    } finally {
      await queue.close();
    }
  });

  it('a worker shows as a supervisor while it runs, and is gone from the dashboard after', async () => {
    const queue = await connect({ prefix, horizon: { prefix: hz } });
    const seen: string[][] = [];
    try {
      await queue.dispatch(RECORD, { n: 1 }, { queue: QUEUE });
      const worker = queue.worker(
        {
          [RECORD]: async () => {
            seen.push(await withRaw((raw) => raw.zrange(`${hz}supervisors`, 0, -1)));
          },
        },
        { queues: [QUEUE], stopWhenEmpty: true, sleep: 0, failer: false },
      );
      await worker.run();
      expect(seen[0], 'supervisors while the job ran').toHaveLength(1);
      expect(seen[0]![0]).toMatch(/:node$/);
      await withRaw(async (raw) => {
        expect(await raw.zrange(`${hz}supervisors`, 0, -1), 'supervisors after the run').toEqual([]);
        expect(await raw.zrange(`${hz}masters`, 0, -1), 'masters after the run').toEqual([]);
      });
    } finally {
      await queue.close();
    }
  });

  it('Horizon’s Pause command for the supervisor pauses the worker; ContinueWorking resumes it', async () => {
    const queue = await connect({ prefix, horizon: { prefix: hz } });
    try {
      const ran: number[] = [];
      const worker = queue.worker(
        { [RECORD]: async (job) => void ran.push(Number(job.command.n)) },
        { queues: [QUEUE], sleep: 0.05, failer: false },
      );
      const running = worker.run();
      const name = await withRaw(async (raw) => {
        for (let i = 0; i < 100; i++) {
          const [supervisor] = await raw.zrange(`${hz}supervisors`, 0, -1);
          if (supervisor) return supervisor;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error('the worker never showed as a supervisor');
      });
      await withRaw((raw) =>
        raw.rpush(`${hz}commands:${name}`, JSON.stringify({ command: 'Laravel\\Horizon\\SupervisorCommands\\Pause', options: [] })),
      );
      await waitFor(async () => (await withRaw((raw) => raw.hget(`${hz}supervisor:${name}`, 'status'))) === 'paused', 'status paused');
      await queue.dispatch(RECORD, { n: 2 }, { queue: QUEUE });
      await new Promise((r) => setTimeout(r, 500));
      expect(ran, 'jobs run while paused').toEqual([]);
      await withRaw((raw) =>
        raw.rpush(
          `${hz}commands:${name}`,
          JSON.stringify({ command: 'Laravel\\Horizon\\SupervisorCommands\\ContinueWorking', options: [] }),
        ),
      );
      await waitFor(async () => ran.length === 1, 'the job run after ContinueWorking');
      await worker.stop();
      await running;
    } finally {
      await queue.close();
    }
  });
});

/**
 * The failed job's retried_by holds one entry, the retry, with this status, laid out as Horizon
 * wrote it at the fixture's step (C's record: its fields, and the entry's keys in order); the failed
 * record keeps its fields. Returns the retry's id.
 */
async function expectRetriedBy(
  failedId: string,
  status: string,
  step: number,
  options: { pushedByLaravel?: boolean } = {},
): Promise<string> {
  return withRaw(async (raw) => {
    const record = await raw.hgetall(hz + failedId);
    // A job Laravel's plain queue pushed had no pending record, so no created_at.
    const fields = fixtureFields(step, C).filter((field) => !(options.pushedByLaravel && field === 'created_at'));
    expect(Object.keys(record).sort(), `the failed record at ${status}: fields`).toEqual(fields);
    expect(record.status, 'the failed record stays failed').toBe('failed');
    const theirs = fixtureHash(step, C).retried_by!;
    // Horizon's layout with the ids and the time masked: [{"id":"…","status":"…","retried_at":N}].
    const mask = (json: string) => json.replace(/"id":"[^"]+"/g, '"id":"ID"').replace(/"retried_at":\d+/g, '"retried_at":0');
    expect(mask(record.retried_by!), 'retried_by, as Horizon lays it out').toBe(
      mask(theirs).replace(/"status":"\w+"/, `"status":"${status}"`),
    );
    const [entry] = JSON.parse(record.retried_by!) as { id: string; status: string; retried_at: number }[];
    expect(Math.abs(entry!.retried_at - Date.now() / 1000), 'retried_at: now, in seconds').toBeLessThan(120);
    expect(entry!.id, 'the retry’s id: Str::orderedUuid()').toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    return entry!.id;
  });
}

/** The retry is a new job: pushed with retry_of, attempts 0, its own id, and recorded pending, as Horizon's fixture step 18 has C′. */
async function expectRetryPushed(retryId: string, failedId: string): Promise<void> {
  await withRaw(async (raw) => {
    const pending = await raw.hgetall(hz + retryId);
    expect(Object.keys(pending).sort(), 'the retry’s record: fields').toEqual(fixtureFields(18, '00000000-0000-4000-8000-000000000005'));
    expect(pending).toMatchObject({ id: retryId, queue: QUEUE, status: 'pending' });
    const payload = JSON.parse(pending.payload!) as Record<string, unknown>;
    const theirs = JSON.parse(fixtureHash(18, '00000000-0000-4000-8000-000000000005').payload!) as Record<string, unknown>;
    expect(Object.keys(payload).sort(), 'the payload’s keys').toEqual(Object.keys(theirs).sort());
    expect(payload).toMatchObject({ id: retryId, uuid: retryId, attempts: 0, retry_of: failedId, type: 'job', silenced: false });
    expect(await raw.lrange(`${prefix}queues:${QUEUE}`, 0, -1), 'the queue holds what the record holds').toEqual([pending.payload]);
    expect(await members(raw, `${hz}pending_jobs`)).toEqual([retryId]);
  });
}

/** A hash the fixtures hold after a step, for the key whose name ends so. */
function fixtureHash(step: number, keyEnd: string): Record<string, string> {
  const line = readHorizonFixtures().find((l) => l.step === step) as FixtureLine;
  return line.after.find((k) => k.key.endsWith(keyEnd))!.value as Record<string, string>;
}

async function waitForValue<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}
