/**
 * Issue 23's proof: the README quick start, installed from the packed package (pack.test.ts
 * calls these inside its 'an installed service beside real Laravel'), against real Laravel.
 *
 * - PHP's jobs on shared queues are still run by PHP: Node has no handler for them, and gives
 *   them back (share on by default) rather than failing them.
 * - An embedding service with a large heap keeps working (no memory limit when embedded).
 * - Ctrl-C (SIGINT) leaves no job reserved.
 * - The start line shows the resolved connection (Redis, prefix, queues).
 */
import { spawn, type SpawnSyncReturns } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';

type Php = (script: string, args: string[], env: NodeJS.ProcessEnv) => SpawnSyncReturns<string>;

interface Setting {
  app: string;
  prefix: string;
  queue: string;
  laravelEnv: NodeJS.ProcessEnv;
  records: () => { class: string; props: Record<string, unknown>; phase?: string }[];
}

/** A Laravel .env in the scratch project for an app of its own; its keys removed after. */
async function withApp(scratch: string, work: (setting: Setting) => Promise<void>): Promise<void> {
  const app = `packqs${randomBytes(3).toString('hex')}`;
  const prefix = `${app}_database_`;
  const queue = 'shared';
  writeFileSync(
    join(scratch, '.env'),
    [
      `APP_NAME=${app}`,
      'REDIS_HOST=127.0.0.1',
      'REDIS_PORT=6379',
      `REDIS_QUEUE=${queue}`,
      'DB_CONNECTION=sqlite',
      `DB_DATABASE=${join(scratch, `${app}.sqlite`)}`,
      '',
    ].join('\n'),
  );
  const recordFile = join(scratch, `php-runs-${app}.jsonl`);
  const laravelEnv = {
    REDIS_PREFIX: prefix,
    QUEUE_NAME: queue,
    LQB_FAILED_DB: join(scratch, `${app}.sqlite`),
    LQB_RECORD_FILE: recordFile,
  };
  const records = () =>
    existsSync(recordFile)
      ? readFileSync(recordFile, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as ReturnType<Setting['records']>[number])
      : [];
  try {
    await work({ app, prefix, queue, laravelEnv, records });
  } finally {
    const redis = new Redis();
    await redis
      .keys(`${prefix}*`)
      .then((keys) => (keys.length ? redis.del(...keys) : 0))
      .finally(() => redis.disconnect());
  }
}

/**
 * The README quick start as a service file: connect({ env }), a handler for the one class Node
 * runs, worker(handlers, { queues }) with no other option, run until told to stop. Lines of JSON
 * on stdout say what it did.
 */
const QUICK_START = (extra = '', connectOptions = '') => `import { connect, defineHandlers } from 'laravel-queue-bridge';
${extra}
const queue = await connect({ env: '.env', connectTimeout: 5_000${connectOptions} });
const handlers = defineHandlers({
  'App\\\\Jobs\\\\Bridge\\\\SlowJob': async (job) => {
    console.log(JSON.stringify({ event: 'node-start', n: job.command.n }));
    await new Promise((resolve) => setTimeout(resolve, Number(job.command.seconds) * 1000));
    console.log(JSON.stringify({ event: 'node-done', n: job.command.n }));
  },
});
const worker = queue.worker(handlers, { queues: ['shared'], handleSignals: true });
// The test says "stop" on stdin; stdin is let go after, so it holds the process no longer.
process.stdin.once('data', () => void worker.stop());
await worker.run();
process.stdin.destroy();
await queue.close();
console.log(JSON.stringify({ event: 'closed' }));
`;

/** Starts the service; its stdout lines, its stderr, and a way to wait for its exit. */
function startService(scratch: string, file: string, source: string, nodeArgs: string[] = []) {
  writeFileSync(join(scratch, file), source);
  const child = spawn(process.execPath, [...nodeArgs, file], { cwd: scratch, stdio: ['pipe', 'pipe', 'pipe'] });
  const out: string[] = [];
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => out.push(...chunk.split('\n').filter(Boolean)));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // A service that does not end is killed, and its exit status is then null: a failure, never a hang.
  const exited = Promise.race([exit, new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000).unref())]).then((code) => {
    if (child.exitCode === null) child.kill('SIGKILL');
    return code;
  });
  const waitFor = async (pattern: RegExp, ms = 20_000) => {
    const deadline = Date.now() + ms;
    while (!out.some((line) => pattern.test(line))) {
      // A worker that stopped of itself prints no more.
      const closed = out.some((line) => line.includes('"event":"closed"'));
      if (closed || Date.now() > deadline)
        throw new Error(
          `the service did not print ${pattern} ${closed ? 'before its worker stopped' : `within ${ms} ms`}: ${JSON.stringify(out)} ${err}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, out, stderr: () => err, exited, waitFor };
}

export function quickStartDefaults(scratchDir: () => string, php: Php): void {
  it('quick start: PHP’s jobs on the shared queue are left to PHP, which runs them; Node runs its own', () =>
    withApp(scratchDir(), async ({ prefix, laravelEnv, records }) => {
      expect(php('laravel-dispatch.php', ['record', JSON.stringify({ n: 1, label: 'for-php' })], laravelEnv).status).toBe(0);
      expect(php('laravel-dispatch.php', ['slow', JSON.stringify({ n: 2, seconds: 0 })], laravelEnv).status).toBe(0);
      const service = startService(scratchDir(), 'quick-shared.mjs', QUICK_START());
      await service.waitFor(/"node-done","n":2/);
      service.child.stdin.write('stop\n');
      expect(await service.exited, service.stderr()).toBe(0);
      const redis = new Redis();
      try {
        // Left where it was: never taken, so never in :reserved or :delayed, its attempts unspent.
        const waiting = (await redis.lrange(`${prefix}queues:shared`, 0, -1)).map(
          (raw) => JSON.parse(raw) as { displayName: string; attempts: number },
        );
        expect(
          waiting.map((job) => [job.displayName, job.attempts]),
          'PHP’s job on the queue after the Node service',
        ).toEqual([['App\\Jobs\\Bridge\\RecordJob', 0]]);
      } finally {
        redis.disconnect();
      }
      const worker = php('laravel-worker.php', ['--queue=shared', '--stop-when-empty', '--sleep=0'], laravelEnv);
      expect(worker.status, worker.stderr).toBe(0);
      expect(
        records().map((r) => [r.class, r.props.label]),
        'what Laravel’s worker ran after the Node service',
      ).toEqual([['App\\Jobs\\Bridge\\RecordJob', 'for-php']]);
      const failed = JSON.parse(php('laravel-dispatch.php', ['failed'], laravelEnv).stdout) as unknown[];
      expect(failed, 'failed_jobs after the Node service shared the queue').toEqual([]);
    }));

  it('quick start in a service with a large heap (300 MB in use): every job runs, no memory stop', () =>
    withApp(scratchDir(), async ({ laravelEnv }) => {
      for (let n = 1; n <= 3; n++)
        expect(php('laravel-dispatch.php', ['slow', JSON.stringify({ n, seconds: 0 })], laravelEnv).status).toBe(0);
      // Kept alive for the service's life: an embedding app's own caches, far past Laravel's 128 MB.
      const ballast = 'globalThis.ballast = Array.from({ length: 3_000_000 }, (_, i) => ({ i, s: String(i) }));';
      const service = startService(scratchDir(), 'quick-heap.mjs', QUICK_START(ballast), ['--max-old-space-size=2048']);
      await service.waitFor(/"node-done","n":3/, 60_000);
      service.child.stdin.write('stop\n');
      expect(await service.exited, service.stderr()).toBe(0);
      expect(
        service.out.filter((line) => line.includes('node-done')),
        'jobs the service ran',
      ).toHaveLength(3);
    }));

  it('quick start: Ctrl-C (SIGINT) while a job runs leaves no job reserved', () =>
    withApp(scratchDir(), async ({ prefix, laravelEnv }) => {
      expect(php('laravel-dispatch.php', ['slow', JSON.stringify({ n: 1, seconds: 1 })], laravelEnv).status).toBe(0);
      const service = startService(scratchDir(), 'quick-sigint.mjs', QUICK_START());
      await service.waitFor(/"node-start","n":1/);
      service.child.kill('SIGINT');
      await service.exited;
      const redis = new Redis();
      try {
        expect(await redis.zcard(`${prefix}queues:shared:reserved`), 'jobs left reserved after Ctrl-C').toBe(0);
      } finally {
        redis.disconnect();
      }
    }));

  it('quick start: the start line names the Redis, prefix and queues connect() resolved', () =>
    withApp(scratchDir(), async ({ prefix }) => {
      // The library says it to its logger (here the console, which pino-style loggers stand in for).
      const service = startService(scratchDir(), 'quick-start-line.mjs', QUICK_START('', ', logger: console'));
      const startLine = new RegExp(
        `redis://127\\.0\\.0\\.1:6379.*prefix "${prefix}".*queues shared.*App\\\\Jobs\\\\Bridge\\\\SlowJob.*left on the queue for a PHP worker`,
      );
      const deadline = Date.now() + 10_000;
      while (!startLine.test(service.out.join('\n') + service.stderr()) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      service.child.stdin.write('stop\n');
      await service.exited;
      expect(service.out.join('\n') + service.stderr(), 'what the service printed as it started').toMatch(startLine);
    }));
}
