/**
 * `lqb record`: payloads Laravel 8.83 wrote (fixtures/laravel/payloads.jsonl), pushed onto a real
 * Redis queue as Laravel pushes them, copied off it without taking anything, with the properties
 * named masked by values of the same PHP type. PHP reads each masked command (its own
 * unserialize, and its own Encrypter for an encrypted one) and writes it back byte for byte.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Encrypter, decodePayload, type JsonObject } from '../../src/laravel/index.js';
import { PhpObject, PhpFloat, deref, toJS, unserialize } from '../../src/php/index.js';
import { phpReserialize, runPhpScript } from '../helpers/php.js';
import { debianPayloads, type PayloadRecord } from '../helpers/laravel.js';
import { lqb } from '../helpers/processes.js';
import { REDIS_URL, dump, rawClient, removePrefix, uniquePrefix } from '../helpers/redis.js';
import { QUEUE_DATABASES, withJobsTable } from '../helpers/jobs-table.js';
import { DatabaseQueue } from '../../src/database/index.js';

type Fixture = Pick<PayloadRecord, 'name' | 'laravel' | 'queue' | 'payload' | 'appKey' | 'cipher'> & { name: string };

const fixtures = debianPayloads() as Fixture[];
const fixture = (name: string) => fixtures.find((record) => record.name === name)!;
const podcast = fixture('job/queue-push');
const card = fixture('encrypted/cbc');
const models = fixture('job/models');

const prefix = uniquePrefix('record');
const QUEUE = 'rec';
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lqb-record-'));
  const raw = rawClient();
  await raw.rpush(`${prefix}queues:${QUEUE}`, podcast.payload, card.payload, models.payload);
  await raw.zadd(
    `${prefix}queues:${QUEUE}:delayed`,
    Math.floor(Date.now() / 1000) + 3600,
    podcast.payload.replace('Episode 1', 'Episode 2'),
  );
  raw.disconnect();
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const raw = rawClient();
  await removePrefix(raw, prefix);
  raw.disconnect();
});

interface Line {
  queue: string;
  state: string;
  payload: string;
}

async function record(flags: string[]): Promise<{ lines: Line[]; stderr: string }> {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}.jsonl`);
  const result = await lqb(
    ['record', `--redis=${REDIS_URL}`, `--prefix=${prefix}`, `--queue=${QUEUE}`, `--out=${out}`, ...flags],
    process.env,
  );
  expect(result.status, `lqb record ${flags.join(' ')}: exit status (stderr: ${result.stderr})`).toBe(0);
  const lines = readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
  return { lines, stderr: result.stderr };
}

/** The command's serialized bytes, as PHP holds them (the JSON string's code units as bytes). */
const commandBytes = (payload: string, encrypter?: Encrypter): Buffer => {
  const command = (decodePayload(payload).envelope.data as JsonObject).command as string;
  if (!encrypter) return Buffer.from(command, 'utf8');
  return Buffer.from(runPhpScript('encrypter.php', `${command}\n`, ['decrypt', card.appKey!, card.cipher!]).trim(), 'base64');
};

const propsOf = (bytes: Buffer) => {
  const object = deref(unserialize(bytes));
  if (!(object instanceof PhpObject)) throw new Error('the command is not an object');
  return object;
};

describe('lqb record', () => {
  it('copies the queue’s jobs, ready then delayed, and leaves the queue as it was', async () => {
    const raw = rawClient();
    const before = await dump(raw, prefix);
    const { lines, stderr } = await record(['--count=10']);
    expect(await dump(raw, prefix), 'the queue’s keys after the copy').toEqual(before);
    raw.disconnect();
    expect(
      lines.map((line) => [line.queue, line.state]),
      'queue and state of each line',
    ).toEqual([
      [QUEUE, 'ready'],
      [QUEUE, 'ready'],
      [QUEUE, 'ready'],
      [QUEUE, 'delayed'],
    ]);
    expect(
      lines.slice(0, 3).map((line) => line.payload),
      'the payloads, unmasked: as Laravel pushed them',
    ).toEqual([podcast.payload, card.payload, models.payload]);
    expect(stderr, 'the closing line').toContain(`4 payloads copied from ${QUEUE}`);
    const two = await record(['--count=2']);
    expect(two.lines.length, '--count=2: lines').toBe(2);
  });

  it('masks the properties named with values of the same PHP type, which PHP reads and writes back as they are', async () => {
    const { lines } = await record([
      '--count=3',
      '--mask=title,ratio,options,source,id',
      `--key=${card.appKey}`,
      `--cipher=${card.cipher}`,
    ]);
    const masked = lines[0]!.payload;
    const command = propsOf(commandBytes(masked));
    expect(toJS(command.get('title') ?? null), 'title: a string').toBe('***');
    expect(command.get('ratio'), 'ratio: a float').toBeInstanceOf(PhpFloat);
    expect((command.get('ratio') as PhpFloat).value, 'ratio: 0.0').toBe(0);
    expect(toJS(command.get('options') ?? null), 'options: an empty array').toEqual([]);
    expect(toJS(command.get('podcastId') ?? null), 'podcastId, not named: as it was').toBe(1);
    // Everything outside the command is as Laravel wrote it.
    const envelope = (payload: string) => ({
      ...decodePayload(payload).envelope,
      data: { ...(decodePayload(payload).envelope.data as JsonObject), command: '' },
    });
    expect(envelope(masked), 'the envelope but the command').toEqual(envelope(podcast.payload));
    // Models: the identifiers' ids masked (ints and strings), their classes kept.
    const modelCommand = toJS(propsOf(commandBytes(lines[2]!.payload))) as Record<string, { class: string; id: unknown }>;
    expect([modelCommand.user?.class, modelCommand.user?.id, modelCommand.order?.id], 'user class, user id, order id').toEqual([
      'App\\Models\\User',
      0,
      '***',
    ]);
    expect(toJS(propsOf(commandBytes(lines[2]!.payload)).get('source') ?? null), 'source').toBe('***');
    // PHP reads each masked command and writes the same bytes back.
    for (const [i, bytes] of [commandBytes(masked), commandBytes(lines[2]!.payload)].entries()) {
      const [back] = phpReserialize([bytes]);
      expect(back instanceof Error ? back.message : back?.toString('base64'), `PHP's serialize(unserialize()) of masked command ${i}`).toBe(
        bytes.toString('base64'),
      );
    }
  });

  it('masks inside an encrypted command with the APP_KEY, which stays encrypted; without it, copies it as it is and says so', async () => {
    const { lines } = await record(['--count=2', '--mask=cardToken', `--key=${card.appKey}`, `--cipher=${card.cipher}`]);
    const masked = lines[1]!.payload;
    expect(decodePayload(masked).encrypted, 'the command is still encrypted').toBe(true);
    expect(masked, 'encrypted again (a new IV)').not.toBe(card.payload);
    const bytes = commandBytes(masked, new Encrypter(card.appKey!, card.cipher));
    const command = propsOf(bytes);
    expect([toJS(command.get('cardToken') ?? null), toJS(command.get('cents') ?? null)], 'cardToken masked, cents as it was').toEqual([
      '***',
      1999,
    ]);
    const [back] = phpReserialize([bytes]);
    expect(back instanceof Error ? back.message : back?.toString('base64'), 'PHP reads the decrypted command').toBe(
      bytes.toString('base64'),
    );
    const withoutKey = await record(['--count=2', '--mask=cardToken']);
    expect(withoutKey.lines[1]!.payload, 'without a key: the payload as it was').toBe(card.payload);
    expect(withoutKey.stderr, 'without a key: said').toContain('1 encrypted command was copied as it was, unmasked');
  });

  it('refuses a missing --count in one line', async () => {
    const result = await lqb(['record', `--redis=${REDIS_URL}`, `--prefix=${prefix}`], process.env);
    expect([result.status, result.stderr.trim().split('\n').length], 'exit status, stderr lines').toEqual([2, 1]);
    expect(result.stderr, 'the error').toContain('--count');
  });
});

describe.each(QUEUE_DATABASES)('lqb record on a jobs table, on %s', (_, url) => {
  it('copies the rows’ payloads, masked, and leaves every row as it was', () =>
    withJobsTable(url, async (t) => {
      const q = DatabaseQueue.open(t.url, { table: t.table });
      try {
        await q.bulkRaw([podcast.payload, models.payload], QUEUE);
        const rows = async () => (await q.db.query(`select * from ${t.table} order by id`)).rows;
        const before = await rows();
        const out = join(dir, `db-${t.table}.jsonl`);
        const result = await lqb(
          [
            'record',
            '--connection=database',
            `--queue-db=${t.url}`,
            `--jobs-table=${t.table}`,
            `--queue=${QUEUE}`,
            '--count=5',
            '--mask=title',
            `--out=${out}`,
          ],
          process.env,
        );
        expect(result.status, `exit status (stderr: ${result.stderr})`).toBe(0);
        expect(await rows(), 'the rows after the copy').toEqual(before);
        const lines = readFileSync(out, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Line);
        expect(
          lines.map((line) => line.state),
          'states',
        ).toEqual(['ready', 'ready']);
        expect(toJS(propsOf(commandBytes(lines[0]!.payload)).get('title') ?? null), 'title masked').toBe('***');
        expect(lines[1]!.payload, 'a payload with nothing to mask: as Laravel wrote it').toBe(models.payload);
      } finally {
        await q.close();
      }
    }));
});
