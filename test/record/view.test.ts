/**
 * The record read back (src/record/view.ts) from each place a worker keeps it: Redis under a
 * prefix, and a database-only app's SQLite, MariaDB and PostgreSQL databases. What a flush
 * wrote reads back the same from all four: the minutes in order, the latest jobs paged newest
 * first, the running workers only. A database no worker wrote to reads as empty, and is left
 * without the tables.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RECORD_DEFAULTS, type CompletedJob, type WorkerHeartbeat } from '../../src/record/NodeRecord.js';
import { recordStore, type MinuteCount, type RecordBatch, type RecordSource } from '../../src/record/store.js';
import { nodeRecordView } from '../../src/record/view.js';
import { RECORD_DATABASES } from '../helpers/record-databases.js';
import { prefixedClient, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';

/** The minute now (Redis expires a minute's key by the wall clock), and a moment well inside it. */
const MINUTE = Math.floor(Date.now() / 60_000) * 60;
const NOW = MINUTE + 30;

interface Place {
  source: RecordSource;
  /** The tables the database holds (none for Redis). */
  tables(): Promise<string[]>;
  drop(): Promise<void>;
}

const PLACES: [name: string, open: () => Promise<Place>][] = [
  [
    'Redis',
    async () => {
      const prefix = uniquePrefix('record-view');
      const client = prefixedClient(prefix);
      return {
        source: { redis: client },
        tables: async () => [],
        drop: async () => {
          client.disconnect();
          const raw = rawClient();
          await removePrefix(raw, prefix);
          raw.disconnect();
        },
      };
    },
  ],
  ...RECORD_DATABASES.map(([name, make]): [string, () => Promise<Place>] => [
    name,
    async () => {
      const own = await make();
      const sql = {
        sqlite: "select name from sqlite_master where type = 'table' and name like 'lqb\\_%' escape '\\' order by name",
        mysql:
          "select table_name as name from information_schema.tables where table_schema = database() and table_name like 'lqb\\_%' order by table_name",
        pgsql:
          "select table_name as name from information_schema.tables where table_schema = current_schema() and table_name like 'lqb\\_%' order by table_name",
      }[own.db.dialect];
      return {
        source: { database: own.db },
        tables: async () => (await own.db.query<{ name: string }>(sql)).rows.map((row) => String(row.name)),
        drop: () => own.drop(),
      };
    },
  ]),
];

const heartbeat = (overrides: Partial<WorkerHeartbeat> = {}): WorkerHeartbeat => ({
  id: 'host-a:101:aa11',
  host: 'host-a',
  pid: 101,
  connection: 'redis',
  queues: ['high', 'default'],
  concurrency: 4,
  inHand: 2,
  since: NOW - 300,
  lastPoll: NOW - 1,
  every: 5,
  ...overrides,
});

const job = (n: number, overrides: Partial<CompletedJob> = {}): CompletedJob => ({
  uuid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  name: 'App\\Jobs\\SendInvoice',
  className: 'App\\Jobs\\SendInvoice',
  queue: 'default',
  connection: 'redis',
  runtimeMs: n,
  finishedAt: NOW - 100 + n / 1000,
  ...overrides,
});

const count = (
  minute: number,
  queue: string,
  className: string,
  outcome: 'completed' | 'failed',
  jobs: number,
  ms: number,
): MinuteCount => ({
  minute,
  queue,
  className,
  outcome,
  jobs,
  ms,
});

const batch = (overrides: Partial<RecordBatch>): RecordBatch => ({
  minutes: [],
  completed: [],
  heartbeat: heartbeat(),
  ended: false,
  now: NOW,
  options: RECORD_DEFAULTS,
  ...overrides,
});

let place: Place | undefined;
afterEach(async () => {
  await place?.drop();
  place = undefined;
});

describe.each(PLACES)('the record read back from %s', (name, open) => {
  it('minutes: one row per minute, queue and class since the minute asked, counts of both outcomes and their runtime added', async () => {
    place = await open();
    const store = recordStore(place.source);
    await store.write(
      batch({
        minutes: [
          count(MINUTE - 120, 'default', 'App\\Jobs\\Old', 'completed', 9, 900),
          count(MINUTE - 60, 'default', 'App\\Jobs\\SendInvoice', 'completed', 3, 30.4),
          count(MINUTE - 60, 'default', 'App\\Jobs\\SendInvoice', 'failed', 1, 500.2),
          count(MINUTE, 'high', 'App\\Jobs\\"Odd"|Name', 'failed', 2, 7),
          count(MINUTE, 'default', 'App\\Jobs\\SendInvoice', 'completed', 1, 12),
        ],
      }),
    );
    // A second flush adds to the same minute's counts.
    await store.write(batch({ minutes: [count(MINUTE, 'default', 'App\\Jobs\\SendInvoice', 'completed', 2, 20)] }));
    const view = nodeRecordView(place.source, () => NOW);
    expect(await view.minutes(MINUTE - 60 + 59), `${name}: the minutes from the one ${MINUTE - 1} falls in`).toEqual([
      { minute: MINUTE - 60, queue: 'default', className: 'App\\Jobs\\SendInvoice', completed: 3, failed: 1, runtimeMs: 530 },
      { minute: MINUTE, queue: 'default', className: 'App\\Jobs\\SendInvoice', completed: 3, failed: 0, runtimeMs: 32 },
      { minute: MINUTE, queue: 'high', className: 'App\\Jobs\\"Odd"|Name', completed: 0, failed: 2, runtimeMs: 7 },
    ]);
    expect(await view.minutes(NOW + 60), `${name}: nothing from a minute to come`).toEqual([]);
  });

  it('recent: the latest completed jobs, newest first, paged, at most `recent` kept', async () => {
    place = await open();
    const store = recordStore(place.source);
    const options = { ...RECORD_DEFAULTS, recent: 5 };
    await store.write(batch({ completed: [job(1), job(2), job(3)], options }));
    await store.write(batch({ completed: [job(4), job(5), job(6, { uuid: null, name: 'Nightly', queue: 'low' })], options }));
    const view = nodeRecordView(place.source, () => NOW);
    const first = await view.recent(0, 2);
    expect(first.total, `${name}: the jobs kept (recent: 5)`).toBe(5);
    expect(first.jobs, `${name}: the newest two`).toEqual([job(6, { uuid: null, name: 'Nightly', queue: 'low' }), job(5)]);
    expect(
      (await view.recent(2, 10)).jobs.map((one) => one.runtimeMs),
      `${name}: the rest, the oldest gone`,
    ).toEqual([4, 3, 2]);
    expect(await view.recent(10, 10), `${name}: past the end`).toEqual({ total: 5, jobs: [] });
    await expect(view.recent(-1, 10)).rejects.toThrow(/offset must be a whole number 0 or more, not -1/);
  });

  it('workers: those whose heartbeat is no older than three of their intervals; one whose run ended is gone', async () => {
    place = await open();
    const store = recordStore(place.source);
    await store.write(batch({ heartbeat: heartbeat() }));
    await store.write(
      batch({ heartbeat: heartbeat({ id: 'host-b:7:bb22', host: 'host-b', pid: 7, since: NOW - 600, lastPoll: NOW - 16 }) }),
    );
    await store.write(
      batch({ heartbeat: heartbeat({ id: 'host-c:8:cc33', host: 'host-c', pid: 8, since: NOW - 900, every: 60, lastPoll: NOW - 100 }) }),
    );
    await store.write(batch({ heartbeat: heartbeat({ id: 'host-d:9:dd44', since: NOW - 50 }) }));
    await store.write(batch({ heartbeat: heartbeat({ id: 'host-d:9:dd44' }), ended: true }));
    const view = nodeRecordView(place.source, () => NOW);
    expect(await view.workers(), `${name}: host-b is 16 s late at 5 s (gone), host-c 100 s at 60 s (live)`).toEqual([
      heartbeat({ id: 'host-c:8:cc33', host: 'host-c', pid: 8, since: NOW - 900, every: 60, lastPoll: NOW - 100 }),
      heartbeat(),
    ]);
    // A worker starting removes the heartbeats readers ignore.
    await store.prune(NOW);
    const later = nodeRecordView(place.source, () => NOW + 1_000);
    expect(await later.workers(), `${name}: none live a while later`).toEqual([]);
    await store.prune(NOW + 1_000);
    await store.write(batch({ heartbeat: heartbeat({ id: 'host-e:1:ee55', lastPoll: NOW + 999 }), now: NOW + 999 }));
    expect(
      (await later.workers()).map((beat) => beat.id),
      `${name}: the pruned ones are not back`,
    ).toEqual(['host-e:1:ee55']);
  });

  it('a store no worker wrote to reads as empty, and is left as it was', async () => {
    place = await open();
    const view = nodeRecordView(place.source, () => NOW);
    expect(await view.minutes(NOW - 3600), `${name}: minutes`).toEqual([]);
    expect(await view.recent(0, 25), `${name}: recent`).toEqual({ total: 0, jobs: [] });
    expect(await view.workers(), `${name}: workers`).toEqual([]);
    expect(await place.tables(), `${name}: the tables a reader made`).toEqual([]);
  });
});
