/**
 * `lqb failed` and `lqb retry` against Laravel 8.83's own `queue:failed` and `queue:retry`
 * (php-fixture-gen/laravel-failed.php), on the same failed_jobs table and Redis prefix: the
 * same table, the same jobs pushed in the same order with the same bytes.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DatabaseUuidFailedJobProvider } from '../../src/worker/index.js';
import { debianPayloads } from '../helpers/laravel.js';
import { lqb, php, scratchPerTest } from '../helpers/processes.js';
import { dump, rawClient, removePrefix } from '../helpers/redis.js';

const current = scratchPerTest('failed');

/** Writes these failed jobs (oldest first) into a fresh failed_jobs table. */
async function logFailed(jobs: { queue: string; payload: string }[]): Promise<void> {
  const failer = DatabaseUuidFailedJobProvider.fromUrl(current.s.env.LQB_FAILED_DB!);
  await failer.flush();
  for (const job of jobs) await failer.log('redis', job.queue, job.payload, 'Exception: failed');
  await failer.close();
}

/** What `args` prints and pushes when artisan runs it, then when lqb does, each from the same table. */
async function bothSides(jobs: { queue: string; payload: string }[], args: string[]) {
  const raw = rawClient();
  const sides = [];
  for (const run of [() => php('laravel-failed.php', args, current.s.env), () => lqb(args, current.s.env)]) {
    await logFailed(jobs);
    const result = await run();
    // artisan writes its errors on standard output, lqb on standard error.
    sides.push({
      printed: result.stdout.split('\n').filter((line) => !line.startsWith('Unable to find')),
      pushed: await dump(raw, current.prefix),
    });
    await removePrefix(raw, current.prefix);
  }
  raw.disconnect();
  return sides;
}

/** A payload with a stdClass command (nothing for refreshRetryUntil to ask) and `extra` as written. */
function payload(extra: string, attempts = '2'): string {
  const uuid = randomUUID();
  return `{"uuid":"${uuid}","displayName":"App\\\\Jobs\\\\Weird","job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","maxTries":null,"attempts":${attempts},"data":{"commandName":"App\\\\Jobs\\\\Weird","command":"O:8:\\"stdClass\\":0:{}"},"extra":${extra}}`;
}

const NUMBERS = [
  '-0',
  '-0.0',
  '1.0',
  '1E2',
  '-0e5',
  '0.1',
  '1e-7',
  '1.5e300',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
];
const SHAPES = [
  '12345678901234567890',
  '100000000000000000000.5',
  '{}',
  '[]',
  '{"0":1,"1":2}',
  '{"1":1,"0":2}',
  '{"a":1,"a":2,"b":3}',
  '{"0":1,"0":2}',
  '"é/\\u2028 ☃ 😀 \\ud83d\\ude00"',
  '[1.5,{"x":-0,"y":[-0.0]}]',
];
const WEIRD = [
  ...[...NUMBERS, ...SHAPES].map((extra) => ({ queue: 'default', payload: payload(extra) })),
  ...['null', '0', '"3"', 'false', '7'].map((attempts) => ({ queue: 'other', payload: payload('1', attempts) })),
  { queue: 'other', payload: `{"uuid":"${randomUUID()}","job":"X","attempts":1,"data":{}}` },
];

describe('lqb retry', () => {
  it('all: every failed job, newest first, each payload re-encoded as PHP does', async () => {
    const [artisan, node] = await bothSides(WEIRD, ['retry', 'all']);
    expect(artisan!.printed).toHaveLength(WEIRD.length + 1);
    expect(node).toEqual(artisan);
  });

  it('IDs in the order given, each once; --queue takes only that queue; --range counts up or down', async () => {
    const ids = WEIRD.map((job) => JSON.parse(job.payload).uuid as string | undefined);
    for (const args of [
      ['retry', ids[3]!, ids[0]!, 'no-such-id', ids[7]!, ids[0]!],
      ['retry', '--queue=other', ids[0]!],
      ['retry', ids[2]!, '--range=3-1', '--range=x', '--range=5-5'],
      ['retry', 'all', ids[1]!],
    ]) {
      const [artisan, node] = await bothSides(WEIRD, args);
      expect(node, args.join(' ')).toEqual(artisan);
    }
  });
});

describe('lqb failed', () => {
  it("shows the Class column artisan's queue:failed shows", async () => {
    const odd = [
      `{"uuid":"${randomUUID()}","job":"Y","data":{"command":"no quotes"}}`,
      `{"uuid":"${randomUUID()}","data":{"command":"O:1:\\"Z\\":0:{}"}}`,
      `{"uuid":"${randomUUID()}"}`,
    ];
    const jobs = [...debianPayloads(), ...WEIRD, ...odd.map((payload) => ({ queue: 'default', payload }))];
    const [artisan, node] = await bothSides(jobs, ['failed']);
    // Each side logged the jobs at its own time: the Failed At column is left out.
    const withoutTime = (lines: string[]) => lines.map((line) => line.replace(/[^|+]+[|+]$/, ''));
    expect(artisan!.printed.join('\n')).toContain('| Illuminate\\Events\\CallQueuedListener ');
    expect(withoutTime(node!.printed)).toEqual(withoutTime(artisan!.printed));
  });
});

describe('lqb flush', () => {
  it("says what artisan's queue:flush says, and leaves what queue:failed then shows", async () => {
    for (const args of [['flush'], ['failed']]) {
      const [artisan, node] = await bothSides(args[0] === 'flush' ? WEIRD : [], args);
      expect(node, args.join(' ')).toEqual(artisan);
    }
  });
});
