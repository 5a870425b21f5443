/**
 * `lqb work` checks what it was given before it starts: a malformed --key, --cipher or
 * --failed-db is a usage error (exit 2), a failed-jobs database that cannot be reached a failure
 * (exit 1); either way one line on stderr, no secret in it, and the process ends at once (no
 * Redis client or database pool left open to keep it alive). Real MariaDB and PostgreSQL refuse
 * the logins here.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildJob, buildPayload } from '../../src/index.js';
import { RedisQueue } from '../../src/redis/index.js';
import { nodeRecordView } from '../../src/record/index.js';
import { freePort } from '../../src/testing/index.js';
import { HANDLERS, lqb, scratchPerTest } from '../helpers/processes.js';
import { prefixedClient, rawClient } from '../helpers/redis.js';

const SECRET = 'not-a-Secret-for-the-log';
const SHORT_KEY = `base64:${Buffer.from('sixteen-byte-key').toString('base64')}`;
const current = scratchPerTest('work');

/** Runs the worker with the flags; it must end by itself with the status, quickly, saying so in one line. */
async function expectWorkerRefuses(flags: string[], status: number, cause: RegExp): Promise<void> {
  const started = Date.now();
  const result = await lqb(['work', `--handlers=${HANDLERS}`, ...flags], current.s.env, { timeoutMs: 15_000 });
  const what = `lqb work ${flags.join(' ')}`;
  expect(result.signal, `${what} kept running after: ${result.stderr}`).toBeNull();
  expect(result.status, `${what}: exit status (stderr: ${result.stderr})`).toBe(status);
  expect(Date.now() - started, `${what} took too long to end`).toBeLessThan(8000);
  expect(result.stderr.trim().split('\n'), `${what}: stderr is one line`).toHaveLength(1);
  expect(result.stderr, what).toMatch(cause);
  for (const secret of [SECRET, SHORT_KEY, SHORT_KEY.slice(7)])
    expect(result.stderr.includes(secret), `${what} printed a secret: ${result.stderr}`).toBe(false);
}

describe('lqb work refuses what it cannot use, before it starts', () => {
  it('an APP_KEY of the wrong length: exit 2, the key not shown', async () => {
    await expectWorkerRefuses([`--key=${SHORT_KEY}`], 2, /--key: AES-256-CBC needs a 32-byte key, this one has 16 bytes/);
  });

  it('a cipher Laravel does not have: exit 2, with or without a key', async () => {
    await expectWorkerRefuses(['--cipher=AES-512-XTS'], 2, /--cipher: unsupported cipher "AES-512-XTS"/);
    await expectWorkerRefuses(['--cipher=AES-512-XTS', `--key=${SHORT_KEY}`], 2, /--cipher: unsupported cipher/);
  });

  it('a failed-jobs URL no driver takes, or that does not parse: exit 2', async () => {
    await expectWorkerRefuses(
      [`--failed-db=oracle://app:${SECRET}@127.0.0.1/x`],
      2,
      /the failed-jobs database "oracle:\/\/app:\*\*\*@127\.0\.0\.1\/x" cannot be used: unsupported/,
    );
    await expectWorkerRefuses(
      [`--failed-db=mysql://app:${SECRET}@127.0.0.1:port/x`],
      2,
      /the failed-jobs database "mysql:\/\/app:\*\*\*@127\.0\.0\.1:port\/x" cannot be used: Invalid URL/,
    );
  });

  it('a failed-jobs database that is not there, or refuses the login: exit 1, naming it', async () => {
    const closed = await freePort();
    await expectWorkerRefuses(
      [`--failed-db=mysql://root:${SECRET}@127.0.0.1:${closed}/test`],
      1,
      new RegExp(`mysql://root:\\*\\*\\*@127\\.0\\.0\\.1:${closed}/test cannot be reached: connect ECONNREFUSED`),
    );
    await expectWorkerRefuses(
      [`--failed-db=postgres://postgres:${SECRET}@127.0.0.1:${closed}/test`],
      1,
      /cannot be reached: connect ECONNREFUSED/,
    );
    await expectWorkerRefuses(
      [`--failed-db=mysql://nobody:${SECRET}@127.0.0.1:3306/test`],
      1,
      /mysql:\/\/nobody:\*\*\*@127\.0\.0\.1:3306\/test cannot be reached: Access denied for user 'nobody'/,
    );
    await expectWorkerRefuses(
      [`--failed-db=postgres://postgres@127.0.0.1:5432/no_such_db_lqb`],
      1,
      /cannot be reached: database "no_such_db_lqb" does not exist/,
    );
    await expectWorkerRefuses(
      ['--failed-db=/no/such/folder/failed.sqlite'],
      1,
      /the failed-jobs database \/no\/such\/folder\/failed\.sqlite cannot be reached: the folder \/no\/such\/folder cannot be written \(ENOENT\)/,
    );
  });

  it('a --redis-ca that cannot be read, with the failed-jobs pool already open: exit 2, nothing left to hold the process', async () => {
    await expectWorkerRefuses(
      ['--failed-db=postgres://postgres@127.0.0.1:5432/test', '--redis=rediss://127.0.0.1:6379', '--redis-ca=/no/such/ca.pem'],
      2,
      /--redis-ca=\/no\/such\/ca\.pem cannot be read: ENOENT/,
    );
  });

  it('--sandbox with a TypeScript module (exit 2), or one that does not load in its threads (exit 1), naming the file', async () => {
    const ts = join(current.s.dir, 'handlers.ts');
    writeFileSync(ts, 'export default {};\n');
    const typescript = await lqb(['work', `--handlers=${ts}`, '--sandbox', '--stop-when-empty'], current.s.env, { timeoutMs: 15_000 });
    expect(typescript.status, typescript.stderr).toBe(2);
    expect(typescript.stderr.trim()).toMatch(
      /--sandbox runs JavaScript handler modules: compile \S+handlers\.ts to \.js first \(lqb work --help for usage\)$/,
    );
    const broken = join(current.s.dir, 'broken.mjs');
    writeFileSync(broken, 'export default {\n');
    const unreadable = await lqb(['work', `--handlers=${broken}`, '--sandbox', '--stop-when-empty'], current.s.env, { timeoutMs: 15_000 });
    expect(unreadable.status, unreadable.stderr).toBe(1);
    expect(unreadable.stderr.trim().split('\n'), 'stderr is one line').toHaveLength(1);
    expect(unreadable.stderr).toMatch(/broken\.mjs could not be loaded in a sandbox thread: SyntaxError/);
  });

  it('a database that answers is no obstacle: the worker runs and stops when empty', async () => {
    const result = await lqb(
      ['work', `--handlers=${HANDLERS}`, '--stop-when-empty', '--failed-db=postgres://postgres@127.0.0.1:5432/test'],
      current.s.env,
      { timeoutMs: 15_000 },
    );
    expect(result.stderr, 'lqb work said more than its start line on standard error').toMatch(/^lqb work: worker starting: [^\n]+\n$/);
    expect(result.status).toBe(0);
  });
});

describe('lqb work keeps a record of what it ran', () => {
  /** Runs one RecordJob with `flags` until the queue is empty; the record's keys left under the prefix, and its view. */
  async function runOne(flags: string[]) {
    const client = prefixedClient(current.prefix);
    const raw = rawClient();
    try {
      await new RedisQueue(client).pushRaw(buildPayload(buildJob({ className: 'App\\Jobs\\Bridge\\RecordJob', properties: { n: 1 } })).raw);
      const result = await lqb(['work', `--handlers=${HANDLERS}`, '--stop-when-empty', ...flags], current.s.env, { timeoutMs: 30_000 });
      expect(result.status, `lqb work ${flags.join(' ')}: ${result.stderr}`).toBe(0);
      const keys = (await raw.keys(`${current.prefix}lqb:*`)).map((key) => key.slice(current.prefix.length)).sort();
      const view = nodeRecordView({ redis: client });
      return { keys, minutes: await view.minutes(Date.now() / 1000 - 120), recent: await view.recent(0, 10) };
    } finally {
      client.disconnect();
      raw.disconnect();
    }
  }

  it('by default: the job counted in its minute and kept among the latest, the heartbeat gone once it stopped', async () => {
    const { keys, minutes, recent } = await runOne([]);
    expect(keys, 'the record’s keys after the run').toEqual(['lqb:completed', expect.stringMatching(/^lqb:minute:\d+$/)]);
    expect(
      minutes.map((row) => [row.queue, row.className, row.completed, row.failed]),
      'the minutes counted',
    ).toEqual([['default', 'App\\Jobs\\Bridge\\RecordJob', 1, 0]]);
    expect(
      recent.jobs.map((job) => [job.className, job.connection]),
      'the latest jobs',
    ).toEqual([['App\\Jobs\\Bridge\\RecordJob', 'redis']]);
  });

  it('--no-record: none of it', async () => {
    expect((await runOne(['--no-record'])).keys, 'the record’s keys after lqb work --no-record').toEqual([]);
  });
});
