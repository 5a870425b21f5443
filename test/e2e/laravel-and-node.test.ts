/**
 * Both directions against Debian's real Laravel 8.83 on real Redis.
 *   - Laravel produces (php-fixture-gen/laravel-dispatch.php), `lqb work` consumes.
 *   - `lqb dispatch` and the library produce, Laravel's own queue:work consumes
 *     (php-fixture-gen/laravel-worker.php).
 *   - A job failed on one side is retried by the other side's retry and runs.
 */
import { randomBytes } from 'node:crypto';
import { databaseConfig, openDatabase, quoteName } from '../../src/database/index.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { buildJob, buildListener, buildPayload } from '../../src/index.js';
import { bridgeRecordJob } from '../../src/cli/demo.js';
import { fromJS } from '../../src/php/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { RECORD_KEY_PATTERN } from '../../src/record/index.js';
import {
  HANDLERS,
  UNSHAPED_ONLY,
  lqb,
  php,
  scratchPerTest,
  type Scratch,
  laravelDispatch as pushedByLaravel,
} from '../helpers/processes.js';
import { dump, prefixedClient, rawClient, removePrefix } from '../helpers/redis.js';

const QUEUE = 'bridge';
// A Redis prefix and scratch directory of each test's own, removed after it.
const current = scratchPerTest('e2e', QUEUE);
let prefix: string;
let s: Scratch;
beforeEach(() => ({ prefix, s } = current));

const work = (...flags: string[]) =>
  lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', ...flags], s.env);
const laravelWork = (...flags: string[]) =>
  php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', ...flags], s.env);
const laravelDispatch = (kind: string, options: object) => pushedByLaravel(s.env, QUEUE, kind, options);

describe('Laravel pushes, lqb work runs', () => {
  it('jobs arrive with their properties, listeners with their event, delayed ones when due', async () => {
    const pushed = await laravelDispatch('record', { n: 1, count: 4, label: 'Zoë ✓', ratio: 2.5, items: [1, { a: 'b' }], flag: false });
    await laravelDispatch('listener', { id: 42, name: 'thing happened' });
    await laravelDispatch('record', { n: 50, label: 'later', ratio: 0.5, items: [], delay: 1 });
    await new Promise((r) => setTimeout(r, 1200));
    const result = await work();
    expect(result.status).toBe(0);
    const runs = s.nodeRuns();
    const records = runs.filter((r) => r.class === 'App\\Jobs\\Bridge\\RecordJob');
    expect(records.map((r) => r.props.n)).toEqual([1, 2, 3, 4, 50]);
    expect(records[0]).toMatchObject({
      props: { label: 'Zoë ✓', ratio: 2.5, items: [1, { a: 'b' }], flag: false },
      attempts: 1,
      queue: QUEUE,
    });
    expect(records.slice(0, 4).map((r) => r.uuid)).toEqual(pushed.map((p) => p.uuid));
    const listener = runs.find((r) => r.class === 'App\\Listeners\\Bridge\\RecordListener@handle')!;
    expect(listener.event).toMatchObject({ id: 42, name: 'thing happened' });
    expect(result.stdout).toMatch(/Processed: {2}App\\Jobs\\Bridge\\RecordJob/);
  });

  it('a flaky job is retried by the rules; a failing one lands where Laravel’s failer reads it', async () => {
    await laravelDispatch('flaky', { n: 7, failTimes: 2 });
    const [failing] = await laravelDispatch('failing', { n: 8, message: 'cannot do it' });
    const result = await work('--tries=3', '--backoff=0');
    expect(result.status).toBe(0);
    expect(
      s
        .nodeRuns()
        .filter((r) => r.class === 'App\\Jobs\\Bridge\\FlakyJob')
        .map((r) => r.attempts),
    ).toEqual([1, 2, 3]);
    expect(
      s
        .nodeRuns()
        .filter((r) => r.class === 'App\\Jobs\\Bridge\\FailingJob')
        .map((r) => r.attempts),
    ).toEqual([1, 2, 3]);
    const laravelSees = JSON.parse((await php('laravel-dispatch.php', ['failed'], s.env)).stdout) as {
      id: string;
      queue: string;
      connection: string;
      exception: string;
    }[];
    expect(laravelSees).toHaveLength(1);
    expect(laravelSees[0]).toMatchObject({ id: failing!.uuid, queue: QUEUE, connection: 'redis' });
    expect(laravelSees[0]!.exception).toMatch(/^Error: cannot do it/);
  });
});

describe('Node pushes, Laravel’s worker runs', () => {
  it('lqb dispatch: every property arrives with its PHP type, typed properties included', async () => {
    const dispatched = await lqb(
      [
        'dispatch',
        'App\\Jobs\\Bridge\\RecordJob',
        `--queue=${QUEUE}`,
        '--props={"n":7,"label":"naïve /slash","ratio":1.0,"items":{"sku":"A-1","qty":2},"flag":null}',
      ],
      s.env,
    );
    expect(dispatched.stderr, 'what lqb dispatch RecordJob said on standard error').toBe(UNSHAPED_ONLY('App\\Jobs\\Bridge\\RecordJob'));
    const { uuid, queue } = JSON.parse(dispatched.stdout) as { uuid: string; queue: string };
    expect(queue).toBe(QUEUE);
    const result = await laravelWork();
    expect(result.stderr).toBe('');
    const [run] = s.phpRuns();
    expect(run).toMatchObject({
      uuid,
      attempts: 1,
      props: { n: 7, label: 'naïve /slash', ratio: 1, items: { sku: 'A-1', qty: 2 }, flag: null },
    });
    expect(run!.props.types).toEqual({ n: 'int', label: 'string', ratio: 'float', items: 'array', flag: 'null' });
  });

  it('lqb dispatch --queue --delay: the command carries queue and delay as onQueue()/delay() leave them, and Laravel runs it', async () => {
    const props = { n: 7, label: 'later', ratio: 1.5, items: [1], flag: true };
    const raw = rawClient();
    const command = async () => {
      const [member] = await raw.zrange(`${prefix}queues:emails:delayed`, 0, -1);
      return JSON.parse(member!).data.command as string;
    };
    await laravelDispatch('record', { ...props, queue: 'emails', delay: 1 });
    const laravels = await command();
    await removePrefix(raw, prefix);
    // RecordJob's own untyped properties come first, as PHP declares them.
    const all = { tries: null, timeout: null, backoff: null, maxExceptions: null, ...props };
    const dispatched = await lqb(
      ['dispatch', 'App\\Jobs\\Bridge\\RecordJob', '--queue=emails', '--delay=1', `--props=${JSON.stringify(all)}`],
      s.env,
    );
    expect(dispatched.stderr, 'what lqb dispatch RecordJob said on standard error').toBe(UNSHAPED_ONLY('App\\Jobs\\Bridge\\RecordJob'));
    const ours = await command();
    raw.disconnect();
    expect(ours).toBe(laravels);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await php('laravel-worker.php', ['--queue=emails', '--stop-when-empty', '--sleep=0'], s.env)).status).toBe(0);
    expect(s.phpRuns()).toMatchObject([{ queue: 'emails', props: { n: 7, label: 'later' } }]);
  });

  it('the library: a queued listener with its event, and a job’s tries and backoff honoured', async () => {
    const client = prefixedClient(prefix);
    const queue = new RedisQueue(client, { defaultQueue: QUEUE });
    const event = fromJS({ id: 5, name: 'from node' }, { class: 'App\\Events\\Bridge\\ThingHappened' });
    const listener = buildListener({ listener: 'App\\Listeners\\Bridge\\RecordListener', arguments: [event] });
    await queue.pushRaw(buildPayload(listener, { displayName: 'App\\Listeners\\Bridge\\RecordListener' }).raw);
    const flaky = buildJob({ className: 'App\\Jobs\\Bridge\\FlakyJob', properties: { n: 9, failTimes: 1 } });
    await queue.pushRaw(buildPayload(flaky, { maxTries: 2, backoff: [0] }).raw);
    client.disconnect();
    const result = await laravelWork();
    expect(result.status).toBe(0);
    const runs = s.phpRuns();
    expect(runs.find((r) => r.event)).toMatchObject({ props: { id: 5, name: 'from node' } });
    expect(runs.filter((r) => r.class === 'App\\Jobs\\Bridge\\FlakyJob').map((r) => r.attempts)).toEqual([1, 2]);
    expect(JSON.parse((await php('laravel-dispatch.php', ['failed'], s.env)).stdout)).toEqual([]);
  });
});

describe('failed on one side, retried by the other', () => {
  it('a job Node failed is retried by Laravel’s queue:retry and runs', async () => {
    await laravelDispatch('record', { n: 3, label: 'fail-in-node', ratio: 1.5, items: [] });
    await work();
    const failer = DatabaseUuidFailedJobProvider.fromUrl(s.env.LQB_FAILED_DB!);
    const [failed] = await failer.all();
    await failer.close();
    expect(failed).toBeDefined();
    const retried = await php('laravel-dispatch.php', ['retry', JSON.stringify({ ids: [failed!.uuid] })], s.env);
    expect(retried.status).toBe(0);
    await laravelWork();
    expect(s.phpRuns()).toMatchObject([{ class: 'App\\Jobs\\Bridge\\RecordJob', attempts: 1, props: { n: 3, label: 'fail-in-node' } }]);
    expect(JSON.parse((await php('laravel-dispatch.php', ['failed'], s.env)).stdout)).toEqual([]);
  });

  it('a job PHP failed is retried by lqb retry and runs in Node', async () => {
    const [pushed] = await laravelDispatch('failing', { n: 4, message: 'php gives up' });
    await laravelWork('--tries=1');
    const listed = await lqb(['failed', '--json'], s.env);
    expect(JSON.parse(listed.stdout)).toMatchObject({ id: pushed!.uuid, queue: QUEUE, class: 'App\\Jobs\\Bridge\\FailingJob' });
    const retried = await lqb(['retry', pushed!.uuid], s.env);
    expect(retried.stdout).toMatch(/has been pushed back onto the queue/);
    const result = await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], {
      ...s.env,
      LQB_NODE_FAILING_SUCCEEDS: '1',
    });
    expect(result.status).toBe(0);
    expect(s.nodeRuns()).toMatchObject([{ class: 'App\\Jobs\\Bridge\\FailingJob', attempts: 1, uuid: pushed!.uuid }]);
    expect((await lqb(['failed', '--json'], s.env)).stdout.trim()).toBe('');
  });
});

describe('lqb restart', () => {
  it('stops Laravel’s worker and ours alike', async () => {
    const node = lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--sleep=0.1'], s.env);
    const laravel = php('laravel-worker.php', [`--queue=${QUEUE}`, '--sleep=1'], s.env);
    await new Promise((r) => setTimeout(r, 1500));
    // Both read the signal after a job (Laravel) or a loop (ours): give each one job to finish.
    await laravelDispatch('record', { n: 1, count: 2, label: 'x', ratio: 1, items: [] });
    const signalled = await lqb(['restart'], s.env);
    expect(signalled.stdout).toMatch(/Broadcasting queue restart signal/);
    await laravelDispatch('record', { n: 3, count: 2, label: 'x', ratio: 1, items: [] });
    const [ours, theirs] = await Promise.all([node, laravel]);
    expect(ours.status).toBe(0);
    expect(ours.stdout).toMatch(/Stopping:\s+restart/);
    expect(theirs.signal ?? theirs.status).toBe(0);
  });
});

describe('chains across the two sides', () => {
  it('Node runs the first link and pushes the next as Laravel would; Laravel runs it and pushes the third back to Node', async () => {
    const link = (n: number, queue?: string) => bridgeRecordJob({ n, label: `link ${n}`, ratio: n, items: [], queue });
    const { serialize } = await import('../../src/php/index.js');
    const third = link(3, 'node-side');
    const second = link(2);
    const first = link(1);
    first.props.set('chained', fromJS([serialize(second).toString('utf8'), serialize(third).toString('utf8')]));
    first.props.set('chainQueue', QUEUE);
    const client = prefixedClient(prefix);
    await new RedisQueue(client, { defaultQueue: QUEUE }).pushRaw(buildPayload(first).raw);
    client.disconnect();

    expect((await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--once'], s.env)).status).toBe(0); // link 1, in Node
    expect((await laravelWork()).status).toBe(0); // link 2, in Laravel, which pushes link 3 to node-side
    expect((await lqb(['work', `--handlers=${HANDLERS}`, '--queue=node-side', '--stop-when-empty', '--sleep=0'], s.env)).status).toBe(0);

    expect(s.nodeRuns().map((r) => [r.props.n, r.queue])).toEqual([
      [1, QUEUE],
      [3, 'node-side'],
    ]);
    expect(s.phpRuns()).toMatchObject([{ props: { n: 2, label: 'link 2', ratio: 2, types: { ratio: 'float' } }, queue: QUEUE }]);
  });
});

describe('the next link of a chain, when neither it nor the chain names a queue', () => {
  it.each([
    ['the connection’s default queue, default', undefined],
    ['the connection’s queue when configured', 'conn-queue'],
  ])('goes to %s on both sides, not to the queue the worker reads, with the same payload', async (_, connectionQueue) => {
    // Laravel's side reads its connection's queue from QUEUE_NAME (worker-app.php), lqb from REDIS_QUEUE.
    const phpEnv = { ...s.env, QUEUE_NAME: connectionQueue ?? '' };
    const nodeEnv = { ...s.env, REDIS_QUEUE: connectionQueue };
    if (!connectionQueue) delete nodeEnv.REDIS_QUEUE;
    const chain = {
      n: 1,
      label: 'head',
      queue: 'high',
      chain: [
        { n: 2, label: 'next' },
        { n: 3, label: 'last', queue: 'own' },
      ],
    };
    const raw = rawClient();
    const landed = async (worker: () => Promise<{ status: number | null }>) => {
      expect((await php('laravel-dispatch.php', ['record', JSON.stringify(chain)], phpEnv)).status).toBe(0);
      expect((await worker()).status).toBe(0);
      const keys = await dump(raw, prefix);
      await removePrefix(raw, prefix);
      // Each push has its own uuid and id; the rest must be the same bytes.
      return Object.fromEntries(
        Object.entries(keys)
          // lqb work's own record of what it ran (src/record/) is no key of the queue's: Laravel's worker keeps none.
          .filter(([key]) => !key.endsWith(':notify') && !RECORD_KEY_PATTERN.test(key))
          .map(([key, value]) => [key, JSON.stringify(value).replace(/\\"(uuid|id)\\":\\"[^"\\]+\\"/g, '\\"$1\\":\\"…\\"')]),
      );
    };
    try {
      const laravel = await landed(() => php('laravel-worker.php', ['--queue=high', '--once'], phpEnv));
      const node = await landed(() => lqb(['work', `--handlers=${HANDLERS}`, '--queue=high', '--once'], nodeEnv));
      expect(Object.keys(laravel)).toEqual([`queues:${connectionQueue ?? 'default'}`]);
      expect(node).toEqual(laravel);
    } finally {
      raw.disconnect();
    }
  });
});

describe('a job that runs past its timeout', () => {
  it('is failed as Laravel fails it, for failOnTimeout and for maxExceptions, with the same record', async () => {
    const cases = [{ failOnTimeout: true }, { maxExceptions: 1 }];
    const failures = async () => {
      const listed = JSON.parse((await php('laravel-dispatch.php', ['failed'], s.env)).stdout) as { id: string; exception: string }[];
      return new Map(listed.map((f) => [f.id, f.exception.split('\n')[0]!.replace(/ in \/.*$/, '')]));
    };
    const firstLines: Record<string, string[]> = {};
    for (const side of ['php', 'node'] as const) {
      const uuids: string[] = [];
      for (const [i, extra] of cases.entries()) {
        const [pushed] = await laravelDispatch('slow', { n: i + 1, seconds: 3, timeout: 1, tries: 3, ...extra });
        uuids.push(pushed!.uuid);
        // Laravel's worker exits at the timeout, so each side runs one job at a time.
        if (side === 'php') await laravelWork();
        else expect((await work()).status).toBe(0);
      }
      const failed = await failures();
      firstLines[side] = uuids.map((uuid) => failed.get(uuid) ?? 'not failed');
    }
    expect(firstLines.php).toEqual([
      expect.stringMatching(
        /^Illuminate\\Queue\\MaxAttemptsExceededException: App\\Jobs\\Bridge\\SlowJob has been attempted too many times or run too long/,
      ),
      expect.stringMatching(/^Illuminate\\Queue\\MaxAttemptsExceededException/),
    ]);
    expect(firstLines.node).toEqual(firstLines.php);
  }, 60_000);
});

describe('maxExceptions on the last attempt', () => {
  it('the exception is counted in the cache even though the job fails for its attempts, on both sides', async () => {
    const [onPhp] = await laravelDispatch('failing', { n: 1, tries: 1, maxExceptions: 3 });
    expect((await laravelWork()).status).toBe(0);
    const [onNode] = await laravelDispatch('failing', { n: 2, tries: 1, maxExceptions: 3 });
    expect((await work()).status).toBe(0);
    const client = prefixedClient(prefix);
    const count = (uuid: string) => client.get(`laravel_cache:job-exceptions:${uuid}`);
    const counts = [await count(onPhp!.uuid), await count(onNode!.uuid)];
    client.disconnect();
    expect(counts).toEqual(['1', '1']);
  });
});

describe('a chained job that deletes itself', () => {
  it('still has its next link pushed, on both sides, as Laravel does', async () => {
    const { serialize } = await import('../../src/php/index.js');
    const chain = (first: number, next: number) => {
      const head = bridgeRecordJob({ n: first, label: 'delete-itself', ratio: 1, items: [] });
      head.props.set('chained', fromJS([serialize(bridgeRecordJob({ n: next, label: 'next', ratio: 1, items: [] })).toString('utf8')]));
      head.props.set('chainQueue', QUEUE);
      return buildPayload(head).raw;
    };
    const client = prefixedClient(prefix);
    const queue = new RedisQueue(client, { defaultQueue: QUEUE });

    await queue.pushRaw(chain(1, 2));
    expect((await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--once'], s.env)).status).toBe(0); // 1 in Node deletes itself
    expect((await laravelWork()).status).toBe(0); // 2 in Laravel
    await queue.pushRaw(chain(3, 4));
    expect((await laravelWork()).status).toBe(0); // 3 in Laravel deletes itself, then 4 in Laravel too
    client.disconnect();

    expect(s.nodeRuns().map((r) => r.props.n)).toEqual([1]);
    expect(s.phpRuns().map((r) => (r.props as { n: number }).n)).toEqual([2, 3, 4]);
  });
});

describe.each([
  ['MariaDB', process.env.LQB_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'],
  ['PostgreSQL', process.env.LQB_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'],
])('failed jobs in %s, shared by both sides', (_, url) => {
  it('Laravel’s failer reads what Node failed; lqb reads and retries what Laravel failed', async () => {
    const table = `lqb_failed_${randomBytes(4).toString('hex')}`;
    const env = { ...s.env, LQB_FAILED_DB: url, LQB_FAILED_TABLE: table };
    try {
      await php('laravel-dispatch.php', ['failing', JSON.stringify({ n: 1, message: 'node gives up', queue: QUEUE })], env);
      expect((await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], env)).status).toBe(0);
      const laravelSees = JSON.parse((await php('laravel-dispatch.php', ['failed'], env)).stdout) as { id: string; exception: string }[];
      expect(laravelSees).toHaveLength(1);
      expect(laravelSees[0]!.exception).toMatch(/^Error: node gives up/);

      const [pushed] = JSON.parse(
        `[${(await php('laravel-dispatch.php', ['failing', JSON.stringify({ n: 2, message: 'php gives up', queue: QUEUE })], env)).stdout.trim()}]`,
      ) as { uuid: string }[];
      expect((await php('laravel-worker.php', [`--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0', '--tries=1'], env)).status).toBe(0);
      const listed = (await lqb(['failed', '--json'], env)).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string });
      expect(listed.map((r) => r.id)).toContain(pushed!.uuid);
      expect((await lqb(['retry', pushed!.uuid], env)).status).toBe(0);
      expect(
        (
          await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], {
            ...env,
            LQB_NODE_FAILING_SUCCEEDS: '1',
          })
        ).status,
      ).toBe(0);
      expect(s.nodeRuns().filter((r) => r.uuid === pushed!.uuid)).toHaveLength(1);
    } finally {
      const db = openDatabase(databaseConfig(url));
      await db.query(`drop table if exists ${quoteName(db.dialect, table)}`);
      await db.close();
    }
  });
});
