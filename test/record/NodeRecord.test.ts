/**
 * The record's layout (src/record/NodeRecord.ts): a minute field splits back into the same queue
 * and class whatever they hold, the key pattern a "nothing leaked" check filters finds the
 * record's keys and no other, and a `record` option that is wrong is refused naming its field.
 */
import { describe, expect, it } from 'vitest';
import {
  RECORD_KEYS,
  RECORD_KEY_PATTERN,
  isLive,
  minuteField,
  readMinuteField,
  recordOptionsProblem,
  resolveRecordOptions,
  type WorkerHeartbeat,
} from '../../src/record/NodeRecord.js';

describe('minute fields', () => {
  it.each([
    ['default', 'App\\Jobs\\SendInvoice'],
    ['a:b|c', 'App\\Jobs\\"Quoted"\\Job'],
    ['', '(undecodable)'],
    ['émoji 🚀', 'App\\Jobs\\Ünïcode'],
  ])('queue %j, class %j: split back as they were', (queue, className) => {
    for (const outcome of ['completed', 'failed'] as const)
      for (const measure of ['jobs', 'ms'] as const)
        expect(readMinuteField(minuteField(queue, className, outcome, measure)), `the field of ${outcome} ${measure}`).toEqual({
          queue,
          className,
          outcome,
          measure,
        });
  });

  it('a field that is not the record’s reads as none', () => {
    for (const field of ['x', '["q","C","completed"]', '["q","C","retried","jobs"]', '["q",1,"failed","ms"]', '{}'])
      expect(readMinuteField(field), `the field ${field}`).toBeUndefined();
  });
});

describe('the record’s key names', () => {
  it('the pattern finds each of them under a prefix, and no key of Laravel’s or Horizon’s', () => {
    for (const key of [RECORD_KEYS.minute(1_700_000_040), RECORD_KEYS.completed, RECORD_KEYS.workers])
      for (const prefix of ['', 'laravel_database_', 'lqb-test-1a2b:'])
        expect(RECORD_KEY_PATTERN.test(`${prefix}${key}`), `${prefix}${key}`).toBe(true);
    for (const key of [
      'queues:default',
      'queues:lqb:completed:reserved',
      'lqb-x:queues:default',
      'horizon:recent_jobs',
      'laravel_cache:lqb',
    ])
      expect(RECORD_KEY_PATTERN.test(key), key).toBe(false);
  });
});

describe('heartbeats', () => {
  const beat = (lastPoll: number, every: number): WorkerHeartbeat => ({
    id: 'h:1:ab',
    host: 'h',
    pid: 1,
    connection: 'redis',
    queues: ['default'],
    concurrency: 1,
    inHand: 0,
    since: 0,
    lastPoll,
    every,
  });
  it('is live until three of its intervals have passed', () => {
    expect(isLive(beat(100, 5), 115), 'exactly three intervals late').toBe(true);
    expect(isLive(beat(100, 5), 116), 'past three intervals').toBe(false);
    expect(isLive(beat(100, 60), 250), 'a slow heartbeat judged by its own interval').toBe(true);
  });
});

describe('the record option', () => {
  it('takes false, nothing, or the three numbers, with their defaults', () => {
    expect(recordOptionsProblem(undefined)).toBeUndefined();
    expect(recordOptionsProblem(false)).toBeUndefined();
    expect(recordOptionsProblem({ keepSeconds: 3600, recent: 0, flushEvery: 0.5 })).toBeUndefined();
    expect(resolveRecordOptions({ recent: 10 })).toEqual({ keepSeconds: 86_400, recent: 10, flushEvery: 5 });
  });

  it.each([
    [true, /record must be false or \{ keepSeconds, recent, flushEvery \}, not true/],
    [{ keep: 60 }, /unknown record option "keep"/],
    [{ keepSeconds: 30 }, /record\.keepSeconds must be whole seconds, 60 or more, not 30/],
    [{ recent: -1 }, /record\.recent must be a whole number, 0 or more, not -1/],
    [{ recent: 1.5 }, /record\.recent must be a whole number/],
    [{ flushEvery: 0 }, /record\.flushEvery must be seconds, more than 0, not 0/],
    [{ keepSeconds: 60, flushEvery: 30 }, /record\.keepSeconds \(60\) must be at least 3 times record\.flushEvery \(30\)/],
  ])('refuses %j, naming the field', (record, message) => {
    expect(recordOptionsProblem(record)).toMatch(message);
    expect(() => resolveRecordOptions(record as never)).toThrow(message);
  });
});
