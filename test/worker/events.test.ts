/**
 * Where the worker's events go (src/worker/events.ts): counters, listeners, onError by the error's
 * source (never by its text), and the recorders, which hear each job and cost no job when they throw.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { WorkerEvents } from '../../src/worker/events.js';
import type { JobRecord, WorkerEvent, WorkerRecorder } from '../../src/worker/types.js';
import type { ReservedJob } from '../../src/queue/contract.js';

const record = {
  job: { queue: 'default' } as ReservedJob,
  name: 'App\\Jobs\\A',
  payload: undefined,
  startedAt: 0,
  deleted: false,
  failedRecorded: false,
} satisfies JobRecord;

describe('WorkerEvents', () => {
  it('gives onError the errors said to be the queue’s or the connection’s, whatever their text', () => {
    const heard: string[] = [];
    const events = new WorkerEvents(new EventEmitter(), { onError: (error) => void heard.push(error.message) });
    events.say({ event: 'error', job: 'App\\Jobs\\A', error: 'could not finish the job: a' }, undefined, 'hook');
    events.say({ event: 'error', error: 'no job named' }, undefined, 'bookkeeping');
    events.say({ event: 'error', job: 'App\\Jobs\\A', error: 'the delete did not reach it' }, undefined, 'queue');
    events.say({ event: 'error', error: 'Redis is unreachable' }, undefined, 'connection');
    expect(heard, 'onError heard other than the queue’s trouble').toEqual(['the delete did not reach it', 'Redis is unreachable']);
    expect(events.counts.errors, 'every error event counted').toBe(4);
  });

  it('tells the recorders of a job’s processing, outcome and end, and counts the outcome per queue', () => {
    const heard: string[] = [];
    const recorder: WorkerRecorder = {
      processing: (job, event) => void heard.push(`${event.event} ${job.name}`),
      outcome: (job, event) => void heard.push(`${event.event} ${job.name}`),
      finished: (job) => void heard.push(`finished ${job.name}`),
      around: (job, handler) => {
        heard.push(`around ${job.name}`);
        return handler();
      },
    };
    const events = new WorkerEvents(new EventEmitter(), {});
    return events
      .open([async () => recorder], { connectionName: 'redis', deps: {}, jobsInHand: () => ({}), warn: () => undefined })
      .then(() => {
        events.processing(record, { event: 'processing', job: record.name, queue: 'default' });
        expect(
          events.around(record, () => 'ran'),
          'the handler’s result through the recorder',
        ).toBe('ran');
        events.outcome(record, { event: 'released', job: record.name, queue: 'default' });
        events.finished(record);
        expect(heard).toEqual(['processing App\\Jobs\\A', 'around App\\Jobs\\A', 'released App\\Jobs\\A', 'finished App\\Jobs\\A']);
        expect(events.perQueueCounts().default?.released, 'the release counted for its queue').toBe(1);
      });
  });

  it('says a warning when a recorder throws at a job’s processing, and still says the event', async () => {
    const said: WorkerEvent[] = [];
    const events = new WorkerEvents(new EventEmitter(), { log: (event) => void said.push(event) });
    const throwing: WorkerRecorder = {
      processing: () => {
        throw new Error('tracer down');
      },
    };
    await events.open([async () => throwing], { connectionName: 'redis', deps: {}, jobsInHand: () => ({}), warn: () => undefined });
    events.processing(record, { event: 'processing', job: record.name });
    expect(
      said.map((event) => event.event),
      'the events said',
    ).toEqual(['warning', 'processing']);
    expect(said[0]?.reason, 'the warning names the recorder’s error').toMatch(/tracer down/);
  });
});
