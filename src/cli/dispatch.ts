/**
 * `lqb dispatch CLASS [--props=JSON] [--queue=Q] [--delay=S] [--tries=N] [--timeout=S]
 * [--backoff=S[,S…]] [--laravel=VERSION]`: pushes a job for PHP (or Node) workers, laid out as
 * that Laravel version lays it out. JSON integers become PHP ints, other numbers floats,
 * arrays lists, objects string-keyed arrays. Prints {"uuid","id","queue"}.
 *
 * The producer's rules are the library's (LaravelQueue.dispatch): this file maps the flags onto
 * connect() and dispatch(), and says what happened in the CLI's words.
 */
import { QueueablePropertyError, decodeJson, isJsonRecord, type JsonValue } from '../laravel/index.js';
import { ShapeError } from '../shapes/command.js';
import { UnnamedLockError } from '../worker/locks/index.js';
import { profileOf, type DispatchOptions } from '../connect/connect.js';
import { RedisUnavailable, whereRedisIs } from '../connect/clients.js';
import { ConnectionSettingsError } from '../connect/settings.js';
import { redactSecrets, redactUrl } from '../connect/redact.js';
import { bookkeepingFlags, lockStoreFrom } from './bookkeeping.js';
import { horizonFrom, recordFlags } from './horizon.js';
import { shapesFlag, shapesFrom } from './shapes-file.js';
import { appShapes, isAppAtHand } from '../shapes/appShapes.js';
import { firstUnshaped, unshapedLine } from '../shapes/unshaped.js';
import { dirname, resolve } from 'node:path';
import { asUsage, connectionFlags, connectionFrom, withLaravelQueue, type Connection } from './connection.js';
import { UsageError, backoffFlag, countFlag, numberFlag, type Command } from './command.js';

export const dispatch: Command = {
  synopsis: 'lqb dispatch CLASS',
  summary:
    'Pushes a job, as dispatch() does, for PHP (or Node) workers; prints {"uuid":…,"id":…,"queue":…}. JSON integers become PHP ints, other numbers floats, arrays lists, objects string-keyed arrays.',
  notes:
    'With --shapes (or LQB_SHAPES; made by lqb shapes) each property is written as the class declares it: mangled by its visibility, typed, defaulted, models as\n' +
    'ModelIdentifiers, the command encrypted for ShouldBeEncrypted, the declared tries/backoff/timeout in the envelope; what the class would not hold is refused;\n' +
    'a ShouldBeUnique job takes its lock in the app’s cache store first, and a duplicate is not pushed ({"duplicate":true}).\n' +
    'Without shapes it cannot know any of that: every property is written public, as its JSON type, unencrypted, with no declared tries or backoff, and it says so once per class.\n' +
    "Where --env names an app's folder with vendor/ and app/ and PHP runs, its shapes are read without being asked (cached until a class file changes); --strict-shapes refuses a dispatch without them.",
  options: {
    props: { type: 'string', value: 'JSON', description: "the command's properties, a JSON object", default: '{}' },
    ...shapesFlag,
    'strict-shapes': {
      type: 'boolean',
      description: 'refuse to dispatch without class shapes, which alone write protected and private properties as PHP declares them',
    },
    queue: {
      type: 'string',
      value: 'Q',
      description: 'the queue to push to',
      default: "the class's declared queue, else the connection's",
    },
    delay: { type: 'string', value: 'S', description: 'seconds before the job may run' },
    tries: { type: 'string', value: 'N', description: "the envelope's maxTries" },
    timeout: { type: 'string', value: 'S', description: "the envelope's timeout" },
    backoff: { type: 'string', value: 'S[,S…]', description: "the envelope's backoff, per attempt" },
    'unique-id': {
      type: 'string',
      value: 'ID',
      description: "the value of a ShouldBeUnique class's uniqueId() method, which Node cannot call",
    },
    'cache-store': bookkeepingFlags['cache-store'],
    'lock-db': bookkeepingFlags['lock-db'],
    'lock-table': bookkeepingFlags['lock-table'],
    ...recordFlags,
    ...connectionFlags,
    laravel: {
      type: 'string',
      value: 'VERSION',
      group: 'Connection',
      description:
        "the Laravel version whose envelope to write: 5.8, 6, 7, 8, 9, 10, 11, 12, 13, or a full version (its major's latest layout)",
      default: "the shapes' version, else laravel/framework's in vendor/composer/installed.json beside the .env, else 8",
    },
  },
  async run({ values, positionals, out }) {
    const [className, ...extra] = positionals;
    if (!className || extra.length) throw new UsageError('dispatch takes one job CLASS, e.g. App\\Jobs\\SendWelcomeEmail');
    if (!/^[A-Za-z_][A-Za-z0-9_]*(\\[A-Za-z_][A-Za-z0-9_]*)*$/.test(className))
      throw new UsageError(`${JSON.stringify(className)} is not a PHP class name`);
    const props = parseProps(values.props);
    const options = await withAppShapes(dispatchOptions(values), values);
    if (!options.shapes && values['strict-shapes'] === true)
      throw new Error(
        `${className} was not pushed: --strict-shapes, and no class shapes (--shapes, LQB_SHAPES, or --env beside the app's vendor/ and app/ with PHP on PATH) say which of its properties are protected or private`,
      );
    const connection = connectionFrom(values);
    const horizon = asUsage(() => horizonFrom(values));
    // Without shapes no lock is taken, so the lock store's flags (and CACHE_DRIVER) are not read.
    // Without --cache-store, connect() reads CACHE_DRIVER / CACHE_STORE (of the --env file too), as lqb work does.
    const {
      cacheStore,
      unreachableLocks: _unreachable,
      ...lockStore
    } = options.shapes ? lockStoreFrom(values, connection) : { cacheStore: 'redis' as const };
    try {
      return await withLaravelQueue(
        connection,
        values,
        {
          ...lockStore,
          ...(typeof values['cache-store'] === 'string' ? { cacheStore } : {}),
          ...(options.laravel ? { laravel: options.laravel } : {}),
          // Resolved here (its flags' names in its errors): connect() is told on or off, never to look again.
          horizon: horizon ?? false,
        },
        async (queue) => {
          const pushed = await queue.dispatch(className, props, options);
          if (pushed.duplicate) {
            process.stderr.write(
              `lqb dispatch: not pushed: ${className} is ShouldBeUnique and its lock ${pushed.lockKey} is held (a job of it is queued or running)\n`,
            );
            out(JSON.stringify({ uuid: null, id: null, queue: pushed.queue, duplicate: true }));
            return 0;
          }
          out(JSON.stringify({ uuid: pushed.uuid, id: pushed.id, queue: pushed.queue }));
          // Written all public: said once it was, in the CLI's words (its flags, not connect()'s options).
          if (!options.shapes && firstUnshaped(className)) process.stderr.write(`lqb dispatch: ${unshapedLine(className, 'cli')}\n`);
          return undefined;
        },
      );
    } catch (error) {
      throw inTheCliWords(error, connection);
    }
  },
};

type Flags = Parameters<Command['run']>[0]['values'];

/**
 * The app's shapes when none were given and `--env` names an app at hand (appShapes.ts), said
 * in one line; an app whose classes PHP could not read is said too, and dispatch goes on without.
 */
async function withAppShapes(options: DispatchOptions, values: Flags): Promise<DispatchOptions> {
  if (options.shapes || typeof values.env !== 'string') return options;
  const appDir = dirname(resolve(values.env));
  if (!isAppAtHand(appDir)) return options;
  const found = await appShapes(appDir);
  if (!found.shapes) {
    process.stderr.write(
      `lqb dispatch: the class shapes of ${appDir} could not be read (${found.why}): every property is written public; give --shapes (lqb shapes --app=${appDir})\n`,
    );
    return options;
  }
  const how = found.from === 'cache' ? 'unchanged since PHP read them' : 'read by PHP now';
  process.stderr.write(`lqb dispatch: class shapes of ${appDir}: ${found.classes} classes, ${how}\n`);
  return { ...options, shapes: found.shapes };
}

/** The flags as dispatch()'s options, each a usage error naming the flag when malformed. */
function dispatchOptions(values: Flags): DispatchOptions {
  const given = (name: string) => values[name] !== undefined;
  const shapes = shapesFrom(values);
  const backoff = backoffFlag(values.backoff);
  return {
    // As onQueue(): the command names a queue only when one is given.
    ...(typeof values.queue === 'string' ? { queue: values.queue } : {}),
    ...(given('delay') ? { delay: numberFlag(values.delay, 'delay', 0, 0) } : {}),
    ...(given('tries') ? { tries: countFlag(values.tries, 'tries', 0, 0) } : {}),
    ...(given('timeout') ? { timeout: countFlag(values.timeout, 'timeout', 0, 0) } : {}),
    ...(backoff ? { backoff } : {}),
    ...(shapes ? { shapes } : {}),
    ...(typeof values['unique-id'] === 'string' ? { uniqueId: values['unique-id'] } : {}),
    ...(given('laravel') ? { laravel: laravelFlag(values.laravel) } : {}),
    onNotRun: (_className, _methods, line) => process.stderr.write(`lqb dispatch: ${line}\n`),
  };
}

/**
 * What the library threw, as the CLI says it: what the flags asked for that cannot be done is a
 * usage error; anything else means the job was not pushed, and why (no password).
 */
function inTheCliWords(error: unknown, connection: Connection): Error {
  if (error instanceof UsageError) return error;
  if (error instanceof QueueablePropertyError)
    return new UsageError(
      `--props: ${error.message}; ${error.property === 'queue' || error.property === 'delay' ? `use --${error.property}` : 'leave it out'}`,
    );
  if (error instanceof ShapeError || error instanceof UnnamedLockError || error instanceof ConnectionSettingsError)
    return new UsageError(error.message);
  // dispatch() already said so, in these words (or that Redis never confirmed the push).
  if (error instanceof Error && /^the job (was not|may or may not have been) pushed/.test(error.message)) return error;
  // connect() wraps why Redis would not connect in where and how long; the line says where once.
  const cause = error instanceof RedisUnavailable && error.cause instanceof RedisUnavailable ? error.cause : error;
  const reason = cause instanceof RedisUnavailable ? cause.reason : (cause as Error).message;
  // A database connection's trouble is its database's, unless it was Redis (its cache store's) that would not connect.
  const where =
    connection.queueConnection === 'database' && !(cause instanceof RedisUnavailable)
      ? `the ${connection.jobsTable} table of ${redactUrl(connection.queueDb ?? '(no database)')}`
      : `Redis at ${whereRedisIs(connection)}`;
  return new Error(redactSecrets(`the job was not pushed: ${where} did not take it (${reason})`), { cause: error });
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

/** --laravel=8, 8.83, 12.x, 5.8…, checked now: a version no profile writes is a usage error. */
function laravelFlag(version: unknown): string {
  const text = String(version);
  try {
    profileOf(text);
    return text;
  } catch (error) {
    throw new UsageError(`--${(error as Error).message}`);
  }
}
