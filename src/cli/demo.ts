/**
 * `lqb demo`: both directions, live. Real Laravel 8.83 (Debian's, through php-fixture-gen/)
 * pushes jobs that the Node worker runs; Node pushes jobs that Laravel's own worker runs.
 * Uses the Redis --redis (or REDIS_URL) names, else 127.0.0.1:6379, else starts `redis-server` on a free port,
 * and keeps everything under a key prefix of its own, removed at the end. It runs from a clone
 * of the repository, where php-fixture-gen/ is: from the installed package it is listed all the
 * same, and says exactly what it needs (exit 1) when it is asked for.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { buildJob, buildPayload } from '../laravel/index.js';
import type { PhpObject } from '../php/index.js';
import { RedisQueue, connectRedis } from '../redis/index.js';
import { redisAnswers, startRedisServer } from '../testing/index.js';
import { DatabaseUuidFailedJobProvider, Worker } from '../worker/index.js';
import { formatEvent } from './output.js';
import { UsageError, type Command } from './command.js';

const PHP_DIR = fileURLToPath(new URL('../../php-fixture-gen/', import.meta.url));
const QUEUE = 'demo';

export const demo: Command = {
  synopsis: 'lqb demo',
  summary:
    "Both directions, live, with real Laravel 8.83 (php-fixture-gen/): Laravel pushes and the Node worker runs; Node pushes and Laravel's worker runs. From a clone of the repository (npm run demo); the installed package does not ship the Laravel side.",
  options: {
    jobs: { type: 'string', value: 'N', description: 'jobs each way', default: '3' },
    redis: {
      type: 'string',
      value: 'URL',
      description: 'the Redis both sides use (redis://[:password@]host:port[/db])',
      env: 'REDIS_URL',
      default: '127.0.0.1:6379, else a redis-server of its own',
    },
  },
  noArguments: true,
  unavailable: () => (existsSync(PHP_DIR) ? undefined : demoNeeds()),
  async run({ values, out }) {
    const count = Math.max(1, Number(values.jobs ?? 3) || 3);
    const prefix = `lqb-demo-${randomBytes(3).toString('hex')}:`;
    const url = typeof values.redis === 'string' ? values.redis : process.env.REDIS_URL || undefined;
    const server = url !== undefined ? givenRedis(url, out, prefix) : await findRedis(out, prefix);
    const dir = mkdtempSync(join(tmpdir(), 'lqb-demo-'));
    const env = {
      ...process.env,
      ...server.phpEnv,
      REDIS_PREFIX: prefix,
      QUEUE_NAME: QUEUE,
      LQB_RECORD_FILE: join(dir, 'php-runs.jsonl'),
      LQB_FAILED_DB: join(dir, 'failed.sqlite'),
    };
    const client = connectRedis({ url: server.url, prefix });
    const queue = new RedisQueue(client, { defaultQueue: QUEUE });
    const failer = DatabaseUuidFailedJobProvider.fromUrl(join(dir, 'failed.sqlite'));
    try {
      out(`\n== 1. Laravel ${laravelVersion()} pushes ${count} jobs; the Node worker runs them`);
      const pushed = php(
        [
          'laravel-dispatch.php',
          'record',
          JSON.stringify({ n: 1, count, label: 'from PHP ✓', ratio: 0.25, items: [1, 2, 3], flag: true, queue: QUEUE }),
        ],
        env,
      );
      for (const line of pushed.trim().split('\n')) out(`   Laravel pushed ${line}`);
      const worker = new Worker(
        queue,
        {
          'App\\Jobs\\Bridge\\RecordJob': async (job) => {
            out(
              `   Node handler: ${job.name} n=${String(job.command.n)} label=${JSON.stringify(job.command.label)} ratio=${String(job.command.ratio)} items=${JSON.stringify(job.command.items)} attempt ${job.attempts}`,
            );
          },
        },
        { queues: [QUEUE], stopWhenEmpty: true, sleep: 0 },
        { failer, log: (event) => out(`   ${formatEvent(event, false)}`) },
      );
      await worker.run();

      out(`\n== 2. Node pushes ${count} jobs; Laravel's own worker (queue:work) runs them`);
      for (let n = 1; n <= count; n++) {
        const command = bridgeRecordJob({
          n: 100 + n,
          label: 'from Node ✓',
          ratio: n,
          items: { sku: `A-${n}`, qty: n },
          flag: n % 2 === 0,
        });
        const { raw, envelope } = buildPayload(command, { profile: '8' });
        await queue.pushRaw(raw);
        out(`   Node pushed {"uuid":"${String(envelope.uuid)}","id":"${String(envelope.id)}","queue":"${QUEUE}"}`);
      }
      const worked = php(['laravel-worker.php', `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], env);
      for (const line of worked.trim().split('\n')) out(`   php artisan queue:work | ${line}`);
      for (const line of readFileSync(env.LQB_RECORD_FILE, 'utf8').trim().split('\n')) {
        const run = JSON.parse(line) as { props: Record<string, unknown> & { types: Record<string, string> }; attempts: number };
        if (Number(run.props.n) > 100)
          out(
            `   PHP handle(): n=${String(run.props.n)} (${run.props.types.n}) ratio=${String(run.props.ratio)} (${run.props.types.ratio}) items=${JSON.stringify(run.props.items)} attempt ${run.attempts}`,
          );
      }
      const left = await queue.size();
      const failures = await failer.all();
      out(`\n== Done: ${left} jobs left on the queue, ${failures.length} failed.`);
      return left === 0 && failures.length === 0 ? 0 : 1;
    } finally {
      await queue.close();
      client.disconnect();
      await removeKeysUnder(server.url, prefix);
      await failer.close();
      rmSync(dir, { recursive: true, force: true });
      server.stop();
    }
  },
};

/**
 * The command of php-fixture-gen/worker-app.php's App\\Jobs\\Bridge\\RecordJob, laid out as that
 * class is declared (its option properties first, then the promoted ones, `ratio` a float).
 */
export function bridgeRecordJob(values: {
  n: number;
  label: string;
  ratio: number;
  items: unknown;
  flag?: boolean | null;
  queue?: string;
}): PhpObject {
  return buildJob({
    className: 'App\\Jobs\\Bridge\\RecordJob',
    properties: [
      { name: 'tries', value: null },
      { name: 'timeout', value: null },
      { name: 'backoff', value: null },
      { name: 'maxExceptions', value: null },
      { name: 'n', value: values.n },
      { name: 'label', value: values.label },
      { name: 'ratio', value: values.ratio, hint: 'float' },
      { name: 'items', value: values.items },
      { name: 'flag', value: values.flag ?? null },
    ],
    queueable: values.queue ? { queue: values.queue } : {},
  });
}

/**
 * What the demo needs that the installed package does not ship, said exactly: the Laravel side
 * (php-fixture-gen/) lives only in the repository. The repository is named as package.json names
 * it; where it names none, no address is made up.
 */
export function demoNeeds(manifest: { repository?: unknown } | undefined = ownManifest()): string {
  const clone = repositoryOf(manifest);
  return [
    'lqb demo needs what the npm package does not ship (php-fixture-gen/, where Laravel plays the PHP side):',
    `${clone === undefined ? "a clone of this package's repository" : `a clone of ${clone}`}, and from it \`npm ci && npm run demo\`;`,
    `that installs (php-fixture-gen/install-deps.sh, as root or with sudo) PHP 8 with php-redis and Debian's Laravel 8.83 packages (${DEMO_PACKAGES}),`,
    'and the demo uses a Redis at --redis (or REDIS_URL), else 127.0.0.1:6379, else starts redis-server (package redis-server)',
  ].join(' ');
}

/** The Debian packages the demo's PHP side runs on, as php-fixture-gen/install-deps.sh installs them. */
const DEMO_PACKAGES =
  'php-cli php-redis php-sqlite3 php-mbstring php-laravel-framework php-illuminate-queue php-illuminate-redis php-illuminate-bus php-illuminate-events php-illuminate-database php-illuminate-encryption';

/** package.json's `repository` (a string or `{ url }`), when it names one. */
function repositoryOf(manifest: { repository?: unknown } | undefined): string | undefined {
  const repository = manifest?.repository;
  const url = typeof repository === 'string' ? repository : (repository as { url?: unknown } | undefined)?.url;
  return typeof url === 'string' && url.trim() !== '' ? url.trim() : undefined;
}

/** The package's own package.json, beside dist/ where it is installed; undefined where it cannot be read. */
function ownManifest(): { repository?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { repository?: unknown };
  } catch {
    return undefined;
  }
}

function php(args: string[], env: NodeJS.ProcessEnv): string {
  const result = spawnSync('php', [join(PHP_DIR, args[0]!), ...args.slice(1)], { env, encoding: 'utf8' });
  if (result.error) throw new Error(`could not run php (install it with php-fixture-gen/install-deps.sh): ${result.error.message}`);
  if (result.status !== 0) throw new Error(`php ${args[0]} failed (${result.status}): ${result.stderr.trim().split('\n')[0]}`);
  return result.stdout;
}

function laravelVersion(): string {
  const result = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'php-illuminate-queue'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.split('+')[0]! : '8.83';
}

/** The Redis the demo uses: its URL for Node, its REDIS_* for the PHP side, and how to let it go. */
interface DemoRedis {
  url: string;
  phpEnv: Record<string, string>;
  stop: () => void;
}

/** The Redis --redis (or REDIS_URL) names (the PHP side is told its host, port, password and database). */
function givenRedis(url: string, out: (line: string) => void, prefix: string): DemoRedis {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // Refused below, naming what was given.
  }
  if (parsed?.protocol !== 'redis:' || !parsed.hostname)
    throw new UsageError(`--redis must be a redis://host:port URL (the demo's PHP side speaks plain Redis), not ${JSON.stringify(url)}`);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const port = parsed.port || '6379';
  const db = parsed.pathname.replace(/^\//, '') || '0';
  out(`Using Redis at ${host}:${port}${db === '0' ? '' : `/${db}`}, keys under ${prefix}`);
  const phpEnv: Record<string, string> = { REDIS_HOST: host, REDIS_PORT: port, REDIS_DB: db };
  if (parsed.password) phpEnv.REDIS_PASSWORD = decodeURIComponent(parsed.password);
  return { url, phpEnv, stop: () => undefined };
}

/** Redis on 6379 if it answers; otherwise a redis-server of our own on a free port. */
async function findRedis(out: (line: string) => void, prefix: string): Promise<DemoRedis> {
  // The prefix is printed so that what the demo leaves (nothing, once it ends) can be looked for.
  const local = (port: number) => ({ url: `redis://127.0.0.1:${port}`, phpEnv: { REDIS_HOST: '127.0.0.1', REDIS_PORT: String(port) } });
  if (await redisAnswers(6379)) {
    out(`Using Redis at 127.0.0.1:6379, keys under ${prefix}`);
    return { ...local(6379), stop: () => undefined };
  }
  const server = await startRedisServer();
  out(`No Redis on 6379: started redis-server on 127.0.0.1:${server.port}, keys under ${prefix}`);
  return { ...local(server.port), stop: server.stop };
}

/**
 * Deletes every key whose full name starts with the prefix: both sides' queues, notify lists,
 * restart and cache keys alike. An unprefixed client does it, as the names SCAN returns are
 * whole and a prefixed client would prefix them once more when deleting; SCAN, unlike KEYS,
 * does not stall a Redis others use.
 */
async function removeKeysUnder(url: string, prefix: string): Promise<void> {
  const raw = new Redis(url);
  try {
    // Glob characters in the prefix are matched as themselves.
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    for await (const keys of raw.scanStream({ match: pattern, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length) await raw.del(...keys);
    }
  } finally {
    raw.disconnect();
  }
}
