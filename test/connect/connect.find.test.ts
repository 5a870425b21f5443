/**
 * LaravelQueue.find: where a job is, by id or uuid, on real Redis. Laravel 8.83 pushes one
 * (laravel-dispatch.php), Node dispatches the others; the library's worker reserves and fails.
 */
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/connect/index.js';
import { defineHandlers } from '../../src/worker/handlers.js';
import { php, scratchPerTest } from '../helpers/processes.js';
import { REDIS_URL } from '../helpers/redis.js';

const QUEUE = 'lookup';
const current = scratchPerTest('find', QUEUE);
const JOB = 'App\\Jobs\\Bridge\\RecordJob';

const open = () =>
  connect({ redis: REDIS_URL, prefix: current.prefix, defaultQueue: QUEUE, failedDb: `sqlite://${current.s.dir}/failed.sqlite` });

describe('LaravelQueue.find(idOrUuid)', () => {
  it('finds a job Laravel pushed, by uuid and by id, ready, with its envelope’s facts', async () => {
    const pushed = await php('laravel-dispatch.php', ['record', JSON.stringify({ n: 1, queue: QUEUE })], current.s.env);
    expect(pushed.status, `laravel-dispatch.php failed: ${pushed.stderr}`).toBe(0);
    const { uuid, id } = JSON.parse(pushed.stdout.trim().split('\n')[0]!) as { uuid: string; id: string };
    const queue = await open();
    try {
      for (const key of [uuid, id]) {
        const found = await queue.find(key);
        expect(found, `Laravel's job not found by ${key === uuid ? 'uuid' : 'id'}`).toMatchObject({
          state: 'ready',
          queue: QUEUE,
          uuid,
          id,
          name: JOB,
          attempts: 0,
        });
        expect(found?.until, 'a ready job has no until').toBeUndefined();
      }
    } finally {
      await queue.close();
    }
  });

  it('delayed (with when it is due), reserved (with when its reservation ends), failed (with its exception), and gone', async () => {
    const queue = await open();
    try {
      const due = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000);
      const delayed = await queue.dispatch(JOB, { n: 2 }, { delay: due });
      const reserved = await queue.dispatch(JOB, { n: 3 }, { queue: 'other' });
      const failing = await queue.dispatch(JOB, { n: 4 });
      const done = await queue.dispatch(JOB, { n: 5 });

      expect(await queue.find(delayed.uuid!), 'the delayed job').toMatchObject({ state: 'delayed', id: delayed.id, until: due });
      expect(await queue.find(reserved.uuid!), 'a job on another queue is found without queues: [it]').toBeUndefined();
      const job = await queue.connection.pop('other');
      expect(job?.uuid, 'popped the wrong job').toBe(reserved.uuid);
      const seen = await queue.find(reserved.uuid!, { queues: [QUEUE, 'other'] });
      expect(seen, 'the reserved job').toMatchObject({ state: 'reserved', queue: 'other', attempts: 1 });
      expect(
        seen!.until!.getTime() / 1000 - Date.now() / 1000,
        'a reserved job’s until is not about retry_after (90 s) away',
      ).toBeGreaterThan(80);

      const worker = queue.worker(
        defineHandlers({
          [JOB]: async (j) => {
            if (j.command.n === 4) throw new Error('four is not allowed');
          },
        }),
        { queues: [QUEUE], stopWhenEmpty: true, sleep: 0 },
      );
      await worker.run();
      expect(await queue.find(failing.uuid!), 'the failed job').toMatchObject({ state: 'failed', queue: QUEUE, id: failing.id, name: JOB });
      expect((await queue.find(failing.uuid!))?.exception, 'the failed job’s exception').toContain('four is not allowed');
      expect(await queue.find(done.uuid!), 'a job that ran and was deleted is gone').toBeUndefined();
      expect(await queue.find(String(done.id!)), 'a job that ran and was deleted is gone (by id)').toBeUndefined();
    } finally {
      await queue.close();
    }
  });

  it('an id found only inside another job’s data is not that job', async () => {
    const queue = await open();
    try {
      const decoy =
        '{"uuid":"decoy-uuid","displayName":"Decoy","job":"App\\\\Jobs\\\\Decoy","data":{"id":"wanted-id","uuid":"wanted-uuid"},"id":"decoy-id","attempts":0}';
      await queue.connection.pushRaw(decoy, QUEUE);
      expect(await queue.find('wanted-id'), 'a job found by an id in its data').toBeUndefined();
      expect(await queue.find('wanted-uuid'), 'a job found by a uuid in its data').toBeUndefined();
      expect(await queue.find('decoy-id'), 'the decoy by its own id').toMatchObject({ state: 'ready', uuid: 'decoy-uuid', name: 'Decoy' });
      // Past the first pages of the list and of the delayed set, which Redis reads a page at a time.
      const filler = (n: number) =>
        `{"uuid":"filler-${n}","displayName":"Filler","job":"App\\\\Jobs\\\\Filler","data":{},"id":"filler-id-${n}","attempts":0}`;
      await queue.connection.bulkRaw(
        Array.from({ length: 1_100 }, (_, n) => filler(n)),
        QUEUE,
      );
      for (let n = 1_100; n < 1_700; n++) await queue.connection.laterRaw(60 + n, filler(n), QUEUE);
      expect(await queue.find('filler-1099'), 'the last ready job of 1,101').toMatchObject({ state: 'ready', id: 'filler-id-1099' });
      expect(await queue.find('filler-id-1699'), 'the last delayed job of 600').toMatchObject({ state: 'delayed', uuid: 'filler-1699' });
    } finally {
      await queue.close();
    }
  });
});
