/**
 * `lqb record --queue=Q --count=N [--out=FILE] [--mask=a,b]`: copies payloads off a live queue
 * for fixtures, without taking them: pages of its ready jobs, then its delayed ones, then those
 * workers hold (read as the dashboard reads them, never the whole queue at once, nothing moved).
 * With --mask, the properties named get values of the same PHP type (src/laravel/mask.ts), so
 * the payload stays one PHP reads; an encrypted command is masked and encrypted again with the
 * APP_KEY, or left as it is, and said, without one. One JSON line a job: {"queue","state","payload"}.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { RedisQueue } from '../redis/index.js';
import { DatabaseQueue } from '../database/index.js';
import { maskPayload } from '../laravel/mask.js';
import type { Queue } from '../queue/contract.js';
import { DatabaseQueueSource } from '../ui/DatabaseQueueSource.js';
import type { JobState } from '../ui/jobs.js';
import { RedisQueueSource, type QueueSource } from '../ui/source.js';
import { connectionFlags, connectionFrom, encrypterFrom, withQueue } from './connection.js';
import { countFlag, UsageError, type Command } from './command.js';

/** Jobs read a page. */
const PAGE = 200;
/** The states read, in this order: those waiting, then those in a worker's hands. */
const STATES: JobState[] = ['ready', 'delayed', 'reserved'];

export const record: Command = {
  synopsis: 'lqb record',
  summary:
    'Copies up to N payloads off a queue for fixtures, without taking them (read in pages: ready, then delayed, then reserved); one JSON line a job: {"queue","state","payload"}.',
  options: {
    queue: { type: 'string', value: 'Q', description: 'the queue to read', default: "the connection's queue" },
    count: { type: 'string', value: 'N', description: 'how many payloads to copy at most', required: true },
    out: { type: 'string', value: 'FILE', description: 'where the lines go', default: 'standard output' },
    mask: {
      type: 'string',
      value: 'a,b',
      description:
        "the command's properties (at any depth) to mask with a value of the same PHP type (a string ***, 0, 0.0, false, an empty array), so PHP still reads the payload; an encrypted command is masked and encrypted again with the APP_KEY",
    },
    ...connectionFlags,
  },
  noArguments: true,
  async run({ values, out }) {
    const count = countFlag(values.count, 'count', NaN, 1);
    if (Number.isNaN(count)) throw new UsageError('record needs --count=N: how many payloads to copy');
    const connection = connectionFrom(values);
    const queueName = typeof values.queue === 'string' && values.queue !== '' ? values.queue : connection.defaultQueue;
    const names = new Set(
      typeof values.mask === 'string'
        ? values.mask
            .split(',')
            .map((name) => name.trim())
            .filter(Boolean)
        : [],
    );
    const encrypter = encrypterFrom(values, connection);
    const file = typeof values.out === 'string' ? createWriteStream(values.out) : undefined;
    const write = file ? (line: string) => file.write(`${line}\n`) : out;
    let written = 0;
    let unmasked = 0;
    try {
      await withQueue(connection, async (queue) => {
        const source = sourceOf(queue, connection.prefix);
        for await (const job of readOnly(source, queueName, count)) {
          const masked = maskPayload(job.payload, names, encrypter);
          if (masked.encryptedUnmasked) unmasked++;
          write(JSON.stringify({ queue: queueName, state: job.state, payload: masked.payload }));
          written++;
        }
      });
    } finally {
      if (file) {
        file.end();
        await once(file, 'close');
      }
    }
    if (unmasked > 0)
      process.stderr.write(
        `lqb record: ${unmasked} encrypted command${unmasked === 1 ? ' was' : 's were'} copied as ${unmasked === 1 ? 'it was' : 'they were'}, unmasked: give --key=APP_KEY (or --env) to mask inside them\n`,
      );
    process.stderr.write(
      `lqb record: ${written} payload${written === 1 ? '' : 's'} copied from ${queueName}${file ? ` to ${String(values.out)}` : ''}\n`,
    );
    return 0;
  },
};

/** The dashboard's read-only view of the queue's driver. */
function sourceOf(queue: Queue, prefix: string): QueueSource {
  if (queue instanceof RedisQueue) return new RedisQueueSource(queue, prefix);
  if (queue instanceof DatabaseQueue) return new DatabaseQueueSource(queue.db, { table: queue.table });
  throw new UsageError(`record reads Redis queues and jobs tables, not a ${queue.driver} queue`);
}

/** Up to `count` jobs of the queue, page by page, state by state; nothing is taken. */
async function* readOnly(source: QueueSource, queue: string, count: number): AsyncGenerator<{ state: JobState; payload: string }> {
  let left = count;
  for (const state of STATES) {
    for (let offset = 0; left > 0; offset += PAGE) {
      const { jobs } = await source.page(queue, state, offset, Math.min(PAGE, left));
      for (const job of jobs) {
        if (left-- <= 0) return;
        yield { state, payload: job.payload };
      }
      if (jobs.length < Math.min(PAGE, left + jobs.length)) break;
    }
  }
}
