/**
 * bench/peers.ts's Node candidates, each in a process of its own run by plain `node` (no
 * TypeScript loader in the measure; lqb from `$LQB_TREE/dist`, `npm run build` first), so none
 * pays for another's garbage or runs code V8 tuned to another's:
 *
 *   LQB_PEERS_CHILD=bullmq-work   BullMQ's Worker (concurrency LQB_PEERS_CONCURRENCY, a no-op
 *       processor) until LQB_PEERS_JOBS jobs have completed, then close(): the parent times the
 *       whole process, as it times `lqb work --stop-when-empty`. 0 jobs: it boots, is ready, closes.
 *   LQB_PEERS_CHILD=lqb-dispatch | bullmq-add   a producer: connect()'s dispatch() of the
 *       RecordJob, or BullMQ's Queue.add of the same properties as job data, LQB_PEERS_STYLE:
 *         awaited   one at a time, each awaited;
 *         inflight  LQB_PEERS_WINDOW at once (Promise.all), window after window;
 *         bulk      LQB_PEERS_WINDOW per call: connect()'s bulk(jobs), BullMQ's addBulk.
 *       LQB_PEERS_WARMUP jobs pushed untimed first; then "ready" on standard output, a line
 *       awaited on standard input (the parent reads Redis's CPU), LQB_PEERS_JOBS pushed timed,
 *       and one JSON line {"jobs","seconds","cpuSeconds"} (process.cpuUsage over the timed part).
 *
 * Both: REDIS_URL, LQB_PEERS_PREFIX (BullMQ's `prefix` option; lqb's key prefix is it and a
 * colon, as Laravel's is spelled), LQB_PEERS_QUEUE, LQB_PEERS_PROPS (the RecordJob's properties as
 * JSON, `n` set per job). BullMQ's jobs are added with removeOnComplete and removeOnFail, as
 * Laravel and lqb delete a job once done.
 */
import { Queue, Worker } from 'bullmq';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';

const mode = process.env.LQB_PEERS_CHILD;
const url = process.env.REDIS_URL;
const prefix = process.env.LQB_PEERS_PREFIX;
const queueName = process.env.LQB_PEERS_QUEUE;
const jobs = Number(process.env.LQB_PEERS_JOBS ?? 0);
const template = JSON.parse(process.env.LQB_PEERS_PROPS ?? '{}');
const props = (n) => ({ ...template, n });
const bullmqOptions = { removeOnComplete: true, removeOnFail: true };
if (!url || !prefix || !queueName) throw new Error('REDIS_URL, LQB_PEERS_PREFIX and LQB_PEERS_QUEUE are needed');

/** BullMQ's own connection, as its docs ask for a worker's: no limit on a command's retries. */
const bullmqConnection = () => new Redis(url, { maxRetriesPerRequest: null });

async function bullmqWork() {
  const connection = bullmqConnection();
  let completed = 0;
  let finish = () => undefined;
  const finished = new Promise((resolve) => (finish = resolve));
  const worker = new Worker(queueName, async () => undefined, {
    connection,
    prefix,
    concurrency: Number(process.env.LQB_PEERS_CONCURRENCY ?? 1),
  });
  worker.on('completed', () => {
    if (++completed === jobs) finish();
  });
  worker.on('failed', (_job, error) => {
    console.error(error);
    process.exitCode = 1;
    finish();
  });
  await worker.waitUntilReady();
  if (jobs > 0) await finished;
  await worker.close();
  connection.disconnect();
}

/** The producer's push of jobs from .. from + count - 1, per LQB_PEERS_STYLE, and how it closes. */
async function producer() {
  const window = Number(process.env.LQB_PEERS_WINDOW ?? 1000);
  const style = process.env.LQB_PEERS_STYLE;
  const range = (from, count) => Array.from({ length: count }, (_, i) => from + i);
  /** Runs `push(n)` for n = from .. from + count - 1, one after another. */
  const oneByOne = (push) => async (from, count) => {
    for (let n = from; n < from + count; n++) await push(n);
  };
  /** Runs `push(ns)` over from .. from + count - 1 in windows of `size`. */
  const windows = (size, push) => async (from, count) => {
    for (let at = from; at < from + count; at += size) await push(range(at, Math.min(size, from + count - at)));
  };
  if (mode === 'lqb-dispatch') {
    const tree = process.env.LQB_TREE;
    const { connect } = await import(`${tree}/dist/index.js`);
    const { bridgeRecordJob } = await import(`${tree}/dist/cli/demo.js`);
    const queue = await connect({ redis: url, prefix: `${prefix}:`, defaultQueue: queueName, logger: false, horizon: false });
    const command = (n) => bridgeRecordJob(props(n));
    const push = {
      awaited: oneByOne((n) => queue.dispatch(command(n))),
      inflight: windows(window, (ns) => Promise.all(ns.map((n) => queue.dispatch(command(n))))),
      bulk: windows(window, (ns) => queue.bulk(ns.map((n) => ({ job: command(n) })))),
    }[style];
    return { push, close: () => queue.close() };
  }
  if (mode === 'bullmq-add') {
    const connection = bullmqConnection();
    const queue = new Queue(queueName, { connection, prefix });
    const push = {
      awaited: oneByOne((n) => queue.add('RecordJob', props(n), bullmqOptions)),
      inflight: windows(window, (ns) => Promise.all(ns.map((n) => queue.add('RecordJob', props(n), bullmqOptions)))),
      bulk: windows(window, (ns) => queue.addBulk(ns.map((n) => ({ name: 'RecordJob', data: props(n), opts: bullmqOptions })))),
    }[style];
    return {
      push,
      close: async () => {
        await queue.close();
        connection.disconnect();
      },
    };
  }
  throw new Error(`LQB_PEERS_CHILD=${mode}: bullmq-work, lqb-dispatch or bullmq-add`);
}

async function produce() {
  const { push, close } = await producer();
  if (!push) throw new Error(`LQB_PEERS_STYLE=${process.env.LQB_PEERS_STYLE}: awaited, inflight or bulk`);
  const warmup = Number(process.env.LQB_PEERS_WARMUP ?? 0);
  await push(0, warmup);
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.pause();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await push(warmup, jobs);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  process.stdout.write(`${JSON.stringify({ jobs, seconds, cpuSeconds: (used.user + used.system) / 1e6 })}\n`);
  await close();
}

await (mode === 'bullmq-work' ? bullmqWork() : produce());
