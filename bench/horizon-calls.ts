/**
 * What one call costs Node, counted in instructions (bench/instructions.ts): the parts of a push
 * with Horizon's records, each alone, in one process under Valgrind's callgrind. Each part runs
 * WARMUP times uncounted (V8 optimizes it), then COUNT times counted, CONCURRENCY at a time, as
 * the worker and `dispatch` run them; its main thread's instructions per call are printed, less
 * what the loop around the calls costs alone.
 *
 * It shows where the cost of a Redis call lies on Node's side: a Lua step called with more
 * arguments costs some 2,000 instructions an argument (ioredis converts, measures and writes each
 * apart), and the same strings packed into one argument (src/horizon/steps.ts, packFields) far
 * less, the packing too (each string's length in bytes). The push-once step with Horizon's records
 * takes four arguments for that reason, two of them packed once for many calls.
 *
 *   npx tsx bench/horizon-calls.ts          WARMUP=20000 COUNT=5000 CONCURRENCY=16 (apt-get install valgrind)
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connect } from '../src/index.js';
import type { BuiltPayload } from '../src/laravel/index.js';
import { encodeJson } from '../src/laravel/json.js';
import { packFields } from '../src/horizon/steps.js';
import { countFromNow, stopCounting, underValgrind } from './instructions.js';
import { dropPrefix } from './scratch.js';

const WARMUP = Number(process.env.WARMUP ?? 20_000);
const COUNT = Number(process.env.COUNT ?? 5_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CLASS = 'App\\Jobs\\Bridge\\RecordJob';

/** Main-thread instructions per call of `call`, CONCURRENCY at a time. */
async function perCall(call: (i: number) => unknown): Promise<number> {
  const rounds = async (total: number) => {
    for (let i = 0; i < total; i += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, (_, k) => call(i + k)));
  };
  await rounds(WARMUP);
  const before = await countFromNow();
  await rounds(COUNT);
  const after = await stopCounting();
  return (after.main - before.main) / COUNT;
}

async function child(): Promise<void> {
  const base = `lqb-bench-calls-${randomBytes(4).toString('hex')}-`;
  const queue = await connect({ redis: URL, prefix: `${base}database_`, telemetry: false, horizon: { prefix: `${base}horizon:` } });
  try {
    // The payload dispatch builds, caught on its way to Horizon's layout (the recorder's own
    // method again once it is caught).
    const recorder = queue.horizon!;
    let built: BuiltPayload | undefined;
    const preparedBuilt = recorder.preparedBuilt.bind(recorder);
    recorder.preparedBuilt = (payload, options) => {
      built ??= payload;
      return preparedBuilt(payload, options);
    };
    await queue.dispatch(CLASS, { n: 1, label: 'bench', ratio: 0.5, items: [] });
    Reflect.deleteProperty(recorder, 'preparedBuilt');
    const redisQueue = queue.connection;
    const { payload, facts } = recorder.preparedBuilt(built!);
    const client = recorder.client as typeof recorder.client & { lqbBenchNoop: (...args: (string | number)[]) => Promise<number> };
    client.defineCommand('lqbBenchNoop', { numberOfKeys: 0, lua: 'return 1' });
    const twelve = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'redis', 'default', CLASS, '1795636688.4485'];
    const packed = packFields(twelve);

    const loop = await perCall(() => 0);
    const rows: [string, number][] = [
      ['a no-op step, 7 arguments (one the payload)', await perCall(() => client.lqbBenchNoop('a', 'b', 'c', 'd', payload, '', 60_000))],
      ['the same, 12 more', await perCall(() => client.lqbBenchNoop('a', 'b', 'c', 'd', payload, '', 60_000, ...twelve))],
      ['the same, the 12 packed into one ahead', await perCall(() => client.lqbBenchNoop('a', 'b', 'c', 'd', payload, '', 60_000, packed))],
      [
        'the same, the 12 packed into one at each call',
        await perCall(() => client.lqbBenchNoop('a', 'b', 'c', 'd', payload, '', 60_000, packFields(twelve))),
      ],
      [
        'the push-once step, no Horizon',
        await perCall(() => redisQueue.pushOnce(built!.raw, randomUUID(), { queue: 'default', markerMs: 60_000 })),
      ],
      [
        "the push-once step with Horizon's pending record",
        await perCall(() => {
          const uuid = randomUUID();
          const keys = redisQueue.pushOnceKeys(uuid, 'default', { prefixed: true });
          return recorder.pushedOnce('default', { keys, payload, due: '', markerMs: 60_000 }, facts);
        }),
      ],
      [
        "Horizon's layout of a built payload (preparedBuilt, its one encoding included)",
        await perCall(() => recorder.preparedBuilt(built!)),
      ],
      [
        "Laravel's encoding of it, which a push without Horizon makes",
        await perCall(() => encodeJson(built!.envelope, { unescapedUnicode: true })),
      ],
      ['a random uuid (each push above makes one)', await perCall(() => randomUUID())],
    ];
    console.log(`| call (${COUNT} counted after ${WARMUP}, ${CONCURRENCY} at a time) | main-thread instructions a call |`);
    console.log('|---|---:|');
    for (const [what, count] of rows) console.log(`| ${what} | ${((count - loop) / 1000).toFixed(1)}k |`);
  } finally {
    await queue.close();
    await dropPrefix(base);
  }
}

if (process.env.HORIZON_CALLS_CHILD) {
  await child();
  process.exit(0);
}
const run = underValgrind(['--import', 'tsx', fileURLToPath(import.meta.url)], { ...process.env, HORIZON_CALLS_CHILD: '1' });
process.stdout.write(execFileSync(run.command, run.args, { env: run.env, encoding: 'utf8' }));
