/**
 * The record's tables in a database-only app's database (src/record/DatabaseRecord.ts), on
 * SQLite, MariaDB and PostgreSQL, each a database of the test's own: the first flush makes the
 * three tables, later ones add to a minute's row rather than write another, a heartbeat is one
 * row per worker (its JSON, beside the two columns gone workers are deleted by), and minutes
 * past `keepSeconds` are deleted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RECORD_DEFAULTS, type WorkerHeartbeat } from '../../src/record/NodeRecord.js';
import { DatabaseRecord } from '../../src/record/DatabaseRecord.js';
import type { RecordBatch } from '../../src/record/store.js';
import { RECORD_DATABASES, type OwnDatabase } from '../helpers/record-databases.js';

const MINUTE = Math.floor(Date.now() / 60_000) * 60;
const NOW = MINUTE + 30;

const heartbeat: WorkerHeartbeat = {
  id: 'host-a:101:aa11',
  host: 'host-a',
  pid: 101,
  connection: 'database',
  queues: ['default', 'emails'],
  concurrency: 2,
  inHand: 1,
  since: NOW - 10,
  lastPoll: NOW,
  every: 5,
};

const batch = (overrides: Partial<RecordBatch>): RecordBatch => ({
  minutes: [],
  completed: [],
  heartbeat,
  ended: false,
  now: NOW,
  options: RECORD_DEFAULTS,
  ...overrides,
});

let own: OwnDatabase | undefined;
afterEach(async () => {
  await own?.drop();
  own = undefined;
});

describe.each(RECORD_DATABASES)('the record’s tables on %s', (name, make) => {
  it('made by the first flush; a minute’s counts added to its row; one heartbeat row per worker; old minutes deleted', async () => {
    own = await make();
    const store = new DatabaseRecord(own.db);
    const a = { queue: 'default', className: 'App\\Jobs\\A', outcome: 'completed' as const };
    await store.write(batch({ minutes: [{ minute: MINUTE - 7_200, ...a, jobs: 5, ms: 50 }] }));
    await store.write(batch({ minutes: [{ minute: MINUTE, ...a, jobs: 2, ms: 10.4 }] }));
    // A minute later than the last trim: the minutes older than keepSeconds go.
    await store.write(
      batch({
        minutes: [{ minute: MINUTE, ...a, jobs: 1, ms: 5 }],
        heartbeat: { ...heartbeat, inHand: 0, lastPoll: NOW + 60 },
        now: NOW + 60,
        options: { ...RECORD_DEFAULTS, keepSeconds: 3_600 },
      }),
    );
    const minutes = await own.db.query<Record<string, unknown>>('select * from lqb_minutes');
    expect(
      minutes.rows.map((row) => [Number(row.minute), row.queue, row.class, row.outcome, Number(row.jobs), Number(row.runtime_ms)]),
      `${name}: lqb_minutes after three flushes`,
    ).toEqual([[MINUTE, 'default', 'App\\Jobs\\A', 'completed', 3, 15]]);
    const workers = await own.db.query<Record<string, unknown>>('select * from lqb_workers');
    expect(
      workers.rows.map((row) => [row.id, Number(row.last_poll), Number(row.every), JSON.parse(String(row.heartbeat))]),
      `${name}: lqb_workers, the heartbeat written over`,
    ).toEqual([[heartbeat.id, NOW + 60, 5, { ...heartbeat, inHand: 0, lastPoll: NOW + 60 }]]);
    expect(
      Number((await own.db.query<{ n: unknown }>('select count(*) as n from lqb_completed')).rows[0]!.n),
      `${name}: lqb_completed`,
    ).toBe(0);

    await store.write(batch({ ended: true }));
    expect((await own.db.query('select * from lqb_workers')).rows, `${name}: the heartbeat removed at the run’s end`).toEqual([]);
  });
});
