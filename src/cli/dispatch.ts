/**
 * `lqb dispatch CLASS [--props=JSON] [--queue=Q] [--delay=S] [--tries=N] [--timeout=S]
 * [--backoff=S[,S…]] [--laravel=VERSION]`: pushes a job for PHP (or Node) workers, laid out as
 * that Laravel version lays it out. JSON integers become PHP ints, other numbers floats,
 * arrays lists, objects string-keyed arrays. Prints {"uuid","id","queue"}.
 */
import { Encrypter, LARAVEL_PROFILES, QueueablePropertyError, buildJob, buildPayload, decodeJson, isJsonRecord, type BuiltPayload, type JsonValue, type LaravelProfile } from '../laravel/index.js';
import { ShapeError, buildShapedPayload, profileOfShapes } from '../shapes/command.js';
import { SHOULD_BE_UNIQUE, UnnamedLockError, acquireUniqueLock, type DispatchLock } from '../worker/UniqueLock.js';
import type { PhpObject } from '../php/index.js';
import { bookkeepingFlags, bookkeepingFrom, type Bookkeeping } from './bookkeeping.js';
import type { ShapesFile } from '../shapes/shape.js';
import { shapesFlag, shapesFrom } from './shapes-file.js';
import { RedisQueue, type RedisClient } from '../redis/index.js';
import { RedisUnavailable, connectionFlags, connectionFrom, openCacheClient, openQueueClient, type Connection } from './connection.js';
import { redactUrl } from '../connect/redact.js';
import { UsageError, backoffFlag, countFlag, numberFlag, type Command } from './command.js';

export const dispatch: Command = {
  synopsis: 'lqb dispatch CLASS',
  summary: 'Pushes a job, as dispatch() does, for PHP (or Node) workers; prints {"uuid":…,"id":…,"queue":…}. JSON integers become PHP ints, other numbers floats, arrays lists, objects string-keyed arrays.',
  notes:
    'With --shapes (or LQB_SHAPES; made by lqb shapes) each property is written as the class declares it: mangled by its visibility, typed, defaulted, models as\n' +
    'ModelIdentifiers, the command encrypted for ShouldBeEncrypted, the declared tries/backoff/timeout in the envelope; what the class would not hold is refused;\n' +
    'a ShouldBeUnique job takes its lock in the app’s cache store first, and a duplicate is not pushed ({"duplicate":true}).\n' +
    'Without shapes it cannot know any of that: every property is written public, as its JSON type, unencrypted, with no declared tries or backoff.',
  options: {
    props: { type: 'string', value: 'JSON', description: 'the command\'s properties, a JSON object', default: '{}' },
    ...shapesFlag,
    queue: { type: 'string', value: 'Q', description: 'the queue to push to', default: 'the class\'s declared queue, else the connection\'s' },
    delay: { type: 'string', value: 'S', description: 'seconds before the job may run' },
    tries: { type: 'string', value: 'N', description: 'the envelope\'s maxTries' },
    timeout: { type: 'string', value: 'S', description: 'the envelope\'s timeout' },
    backoff: { type: 'string', value: 'S[,S…]', description: 'the envelope\'s backoff, per attempt' },
    'unique-id': { type: 'string', value: 'ID', description: 'the value of a ShouldBeUnique class\'s uniqueId() method, which Node cannot call' },
    'cache-store': bookkeepingFlags['cache-store'],
    'lock-db': bookkeepingFlags['lock-db'],
    'lock-table': bookkeepingFlags['lock-table'],
    ...connectionFlags,
    laravel: { type: 'string', value: 'VERSION', group: 'Connection', description: 'the Laravel version whose envelope to write: 5.8, 6, 7, 8, 9, 10, 11, 12, 13, or a full version (its major\'s latest layout)', default: '8' },
  },
  async run({ values, positionals, out }) {
    const [className, ...extra] = positionals;
    if (!className || extra.length) throw new UsageError('dispatch takes one job CLASS, e.g. App\\Jobs\\SendWelcomeEmail');
    if (!/^[A-Za-z_][A-Za-z0-9_]*(\\[A-Za-z_][A-Za-z0-9_]*)*$/.test(className)) throw new UsageError(`${JSON.stringify(className)} is not a PHP class name`);
    const props = parseProps(values.props);
    const profile = profileFor(values.laravel);
    const connection = connectionFrom(values);
    const defaultQueueName = typeof values.queue === 'string' ? values.queue : connection.defaultQueue;
    const delay = values.delay === undefined ? 0 : numberFlag(values.delay, 'delay', 0, 0);
    // As onQueue() and delay() do, the command itself carries them: a chain or a release reads them there.
    const queueable = { ...(typeof values.queue === 'string' ? { queue: values.queue } : {}), ...(delay > 0 ? { delay } : {}) };
    const tries = values.tries === undefined ? null : countFlag(values.tries, 'tries', 0, 0);
    const timeout = values.timeout === undefined ? null : countFlag(values.timeout, 'timeout', 0, 0);
    const backoff = backoffFlag(values.backoff) ?? null;
    const shapes = shapesFrom(values);
    const { built, queueName } = shapes
      ? shapedPayload(shapes, className, props, { laravel: values.laravel, queueable, queue: values.queue, delay, tries, timeout, backoff, connection })
      : { built: buildPayload(plainCommand(className, props, queueable, profile), { profile, maxTries: tries, timeout, backoff, delay: (profile === '12' || profile === '13') && delay ? delay : null }), queueName: defaultQueueName };
    const locksFor = shapes ? bookkeepingFrom(values, connection) : undefined;
    let client: RedisClient | undefined;
    try {
      if (shapes && locksFor) {
        // As PendingDispatch: a ShouldBeUnique job takes its lock first, and a duplicate is not pushed.
        const lock = await uniqueLockFor(shapes, built.command, values, connection, locksFor);
        if (lock && !lock.acquired) {
          process.stderr.write(`lqb dispatch: not pushed: ${className} is ShouldBeUnique and its lock ${lock.key} is held (a job of it is queued or running)\n`);
          out(JSON.stringify({ uuid: null, id: null, queue: queueName, duplicate: true }));
          return 0;
        }
      }
      client = await openQueueClient(connection);
      const queue = new RedisQueue(client);
      if (delay > 0) await queue.laterRaw(delay, built.raw, queueName);
      else await queue.pushRaw(built.raw, queueName);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      // Never a silent drop: the caller hears that this job was not pushed, and why (no password).
      const reason = error instanceof RedisUnavailable ? error.reason : (error as Error).message;
      throw new Error(`the job was not pushed: Redis at ${connection.cluster?.join(',') ?? redactUrl(connection.url)} did not take it (${reason})`);
    } finally {
      client?.disconnect();
    }
    out(JSON.stringify({ uuid: built.envelope.uuid ?? null, id: built.envelope.id, queue: queueName }));
  },
};

/**
 * The unique lock of a ShouldBeUnique job, taken in the app's cache store (--cache-store, as the
 * worker reads it); undefined for a class that is not unique. A lock Node cannot name is a usage error.
 */
async function uniqueLockFor(shapes: ShapesFile, command: PhpObject, values: Record<string, unknown>, connection: Connection, locksFor: ReturnType<typeof bookkeepingFrom>): Promise<DispatchLock | undefined> {
  const shape = Object.hasOwn(shapes.classes, command.className) ? shapes.classes[command.className] : undefined;
  if (!shape?.interfaces.includes(SHOULD_BE_UNIQUE)) return undefined;
  const profile = values.laravel === undefined ? (profileOfShapes(shapes) ?? '8') : profileFor(values.laravel);
  let cache: RedisClient | undefined;
  let bookkeeping: Bookkeeping | undefined;
  try {
    cache = await openCacheClient(connection);
    bookkeeping = locksFor(cache);
    return await acquireUniqueLock(bookkeeping.locks, shapes, command, profile, typeof values['unique-id'] === 'string' ? { uniqueId: values['unique-id'] } : {});
  } catch (error) {
    if (error instanceof UnnamedLockError) throw new UsageError(error.message);
    throw error;
  } finally {
    await bookkeeping?.close();
    cache?.disconnect();
  }
}

interface ShapedFlags {
  laravel: unknown;
  queueable: Record<string, unknown>;
  queue: unknown;
  delay: number;
  tries: number | null;
  timeout: number | null;
  backoff: number[] | null;
  connection: Connection;
}

/**
 * A payload checked against the class's shape (buildShapedPayload). A refusal is a usage error
 * naming class and property; a PHP method Node cannot run
 * (backoff(), retryUntil()) is said on standard error.
 */
function shapedPayload(shapes: ShapesFile, className: string, props: Record<string, unknown>, flags: ShapedFlags): { built: BuiltPayload; queueName: string } {
  try {
    const { appKey, cipher } = flags.connection;
    const built = buildShapedPayload(shapes, className, props, {
      ...(flags.laravel === undefined ? {} : { profile: profileFor(flags.laravel) }),
      queueable: flags.queueable,
      maxTries: flags.tries,
      timeout: flags.timeout,
      backoff: flags.backoff,
      delay: flags.delay,
      ...(appKey ? { encrypter: new Encrypter(appKey, cipher) } : {}),
      onNotRun: (name, methods) => process.stderr.write(`lqb dispatch: ${name} defines ${methods.join(' and ')}, PHP that Node cannot run: the payload goes without ${methods.length > 1 ? 'their results' : 'its result'}\n`),
    });
    return { built, queueName: typeof flags.queue === 'string' ? flags.queue : (built.queue ?? flags.connection.defaultQueue) };
  } catch (error) {
    if (error instanceof ShapeError) throw new UsageError(error.message);
    throw error;
  }
}

/** The command without shapes; a property the Queueable trait owns (queue, delay…) is a usage error. */
function plainCommand(className: string, props: Record<string, unknown>, queueable: Record<string, unknown>, profile: LaravelProfile): PhpObject {
  try {
    return buildJob({ className, properties: props, queueable }, profile);
  } catch (error) {
    if (error instanceof QueueablePropertyError) throw new UsageError(`--props: ${error.message}; ${error.property === 'queue' || error.property === 'delay' ? `use --${error.property}` : 'leave it out'}`);
    throw error;
  }
}

/**
 * --props as JSON, numbers as PHP's json_decode reads them ("1.0" a float, written as PHP
 * writes it: d:1;), as the contract says; objects keep their key order.
 */
function parseProps(value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  let parsed: JsonValue;
  try {
    parsed = decodeJson(String(value), { numbers: 'php' });
  } catch (error) {
    throw new UsageError(`--props is not JSON: ${(error as Error).message}`);
  }
  if (!isJsonRecord(parsed)) throw new UsageError('--props must be a JSON object of property names and values');
  return Object.fromEntries(parsed instanceof Map ? parsed : Object.entries(parsed));
}

/** --laravel=8, 8.83, 12.x, 5.8…: the profile whose layout that version writes. */
export function profileFor(version: unknown): LaravelProfile {
  if (version === undefined) return '8';
  const text = String(version);
  const major = text.startsWith('5.') ? '5.8' : text.split('.')[0]!;
  if (!(LARAVEL_PROFILES as readonly string[]).includes(major)) throw new UsageError(`--laravel must be one of ${LARAVEL_PROFILES.join(', ')} (or a full version), not ${JSON.stringify(text)}`);
  return major as LaravelProfile;
}
