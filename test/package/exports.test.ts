/**
 * What the package root exports (src/index.ts), and what each subpath keeps: the root is the
 * list chosen for a team embedding the library (ROOT below, values and types, as TypeScript
 * reads the module), never a test helper, with every name of `laravel-queue-bridge/php` (the
 * contract, DESIGN.md §1); the internals the root leaves out stay reachable from their subpath,
 * the same objects; and `/laravel` loads neither ioredis nor ajv when imported (from dist/, which
 * the global setup builds from these sources).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as rootModule from '../../src/index.js';
import * as laravel from '../../src/laravel/index.js';
import * as php from '../../src/php/index.js';
import * as redis from '../../src/redis/index.js';
import * as shapes from '../../src/shapes/index.js';
import * as worker from '../../src/worker/index.js';
import * as connect from '../../src/connect/index.js';
import * as testing from '../../src/testing/index.js';
import { root } from '../helpers/php.js';
import { moduleTrace, modulesLoaded } from '../helpers/bundle.js';

/** The root's names: see the comment at the top of src/index.ts for why each group is there. */
const ROOT = {
  php: [
    'unserialize',
    'PhpIncompleteObject',
    'UnserializeOptions',
    'serialize',
    'SerializeOptions',
    'toJS',
    'fromJS',
    'phpClassOf',
    'PHP_CLASS',
    'PHP_ENUM',
    'PHP_SERIALIZED',
    'FromJSHint',
    'JSPhpObject',
    'formatPhpFloat',
    'parsePhpFloat',
    'phpStringOfFloat',
    'PhpUnserializeError',
    'PhpSerializeError',
    'PhpArray',
    'PhpObject',
    'PhpFloat',
    'PhpEnum',
    'PhpRef',
    'PhpSerializable',
    'mangle',
    'demangle',
    'deref',
    'PhpKey',
    'PhpValue',
    'PropertyName',
    'Visibility',
  ],
  connect: [
    'connect',
    'LaravelQueue',
    'resolveConnection',
    'ConnectionSettingsError',
    'RedisUnavailable',
    'ConnectOptions',
    'DispatchOptions',
    'JobToPush',
    'ChainOptions',
    'PendingBatchOptions',
    'DispatchedBatch',
    'DispatchName',
    'DispatchProps',
    'UntypedJobs',
    'Dispatched',
    'FoundJob',
    'QueueWorkerOptions',
    'ConnectionOptions',
    'ConnectionSettings',
    'TelemetryOptions',
  ],
  worker: [
    'Worker',
    'WorkerUsageError',
    'WorkerOptions',
    'WorkerDependencies',
    'WorkerEvent',
    'WorkerEventMap',
    'WorkerLogger',
    'WorkerStats',
    'WorkerCounts',
    'WorkerHealth',
    'FailedJobInfo',
    'StopOptions',
    'StopReason',
    'loadHandlers',
    'defineHandlers',
    'Handler',
    'HandlerJob',
    'HandlerMap',
    'HandlerObject',
    'FailedHook',
    'TypedHandler',
    'TypedHandlerJob',
    'TypedHandlerMap',
    'TypedJobMethods',
    'JobMethods',
    'MethodJob',
    'MailableArgs',
    'MailableJob',
    'Notifiable',
    'NotificationArgs',
    'NotificationJob',
    'DatabaseUuidFailedJobProvider',
    'MissingDriverError',
    'FailedJob',
    'FailedJobProvider',
    'MaxAttemptsExceededError',
    'TimeoutExceededError',
    'ManuallyFailedError',
    'NoHandlerError',
    'UndecodableJobError',
    'withoutOverlapping',
    'rateLimited',
    'GuardedHandler',
    'GuardKey',
    'Limit',
    'Limits',
    'WithoutOverlappingOptions',
    'RateLimitedOptions',
    'sandboxedHandlers',
    'SandboxedHandlers',
    'SandboxOptions',
  ],
  laravel: [
    'decodePayload',
    'encodePayload',
    'commandOf',
    'PayloadError',
    'DecodedPayload',
    'Envelope',
    'LaravelProfile',
    'PayloadFormat',
    'buildJob',
    'buildListener',
    'buildModelIdentifier',
    'buildDate',
    'buildPayload',
    'JobSpec',
    'ListenerSpec',
    'PropertySpec',
    'PayloadOptions',
    'BuiltPayload',
    'validatePayload',
    'assertValidPayload',
    'PayloadSchemaError',
    'PayloadIssue',
    'PayloadValidationOptions',
    'Encrypter',
    'DecryptError',
    'Cipher',
    'viewCommand',
    'QueueableFields',
    'PropertyView',
    'UserJobView',
    'ListenerView',
    'NotifiableView',
    'NotificationView',
    'MailableView',
    'ClosureView',
    'StringJobView',
    'EncryptedView',
    'JobView',
    'modelClass',
    'asModelIdentifier',
    'asDate',
    'asCollection',
    'asEnum',
    'asEloquentModel',
    'ModelIdentifierView',
    'PhpDateView',
    'CollectionView',
    'EnumView',
    'EloquentModelView',
  ],
  queue: ['Queue', 'QueueDriver', 'ReservedJob'],
  redis: [
    'RedisQueue',
    'cancelDelayed',
    'CancelOutcome',
    'RedisQueueOptions',
    'QueuedJob',
    'RedisJob',
    'ReservedFields',
    'connectRedis',
    'RedisConnectOptions',
    'RedisClient',
  ],
  shapes: [
    'ShapesFile',
    'ClassShape',
    'ClassKind',
    'PropertyShape',
    'DeclaredName',
    'readShapes',
    'parseShapes',
    'ShapesError',
    'buildShapedPayload',
    'ShapeError',
    'ShapedPayloadOptions',
  ],
} as const;

/** Internals the root leaves out, each still exported by its subpath (a sample of every group's). */
const SUBPATH_ONLY = {
  laravel: ['plainJson', 'jsonNumber', 'isJsonObject', 'LARAVEL_PROFILES', 'QUEUEABLE_FIELDS', 'parseAppKey', 'schemaFor'],
  redis: ['registerSteps', 'luaSource', 'whenReady', 'hasHashTag', 'describeConnectionError'],
  worker: [
    'databaseConfig',
    'openDatabase',
    'quoteName',
    'DRIVER_PACKAGES',
    'laravelTimestamp',
    'xxh128',
    'hiddenContextKey',
    'overlapLockName',
    'rateLimitKeys',
    'allJobsHaveRanExactlyOnce',
    'uniqueLockKeys',
    'uniquenessOf',
    'phpTruthy',
    'RESTART_KEY',
    'pausedKey',
    'CallQueuedHandler',
    'QueueCache',
    'RedisLock',
    'RedisLockStore',
    'DatabaseLockStore',
    'acquireUniqueLock',
    'DatabaseBatchRepository',
    'retryFailedJob',
    'handlerNames',
    'defaultWorkerOptions',
  ],
  shapes: ['declarationsFor', 'typeName', 'REFLECT_PHP', 'reflectShapes', 'shapesSchema', 'shapedCommand'],
} as const;

const expected: readonly string[] = Object.values(ROOT).flat().sort();

/** Every name a module exports, values and types, as TypeScript resolves it. */
function exportedNames(...files: string[]): Map<string, string[]> {
  const paths = files.map((file) => join(root, file));
  const program = ts.createProgram(paths, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  return new Map(
    files.map((file, i) => {
      const source = program.getSourceFile(paths[i]!);
      const symbol = source && checker.getSymbolAtLocation(source);
      if (!symbol) throw new Error(`${file}: TypeScript found no module there`);
      return [
        file,
        checker
          .getExportsOfModule(symbol)
          .map((name) => name.name)
          .sort(),
      ];
    }),
  );
}

const modules = exportedNames('src/index.ts', 'src/php/index.ts', 'src/testing/index.ts');
const rootNames = modules.get('src/index.ts')!;

type Module = Record<string, unknown>;
const top: Module = rootModule;
const subpaths: Record<string, Module> = { laravel, php, redis, shapes, worker, connect };

describe('the package root (src/index.ts)', () => {
  it('exports exactly the chosen names, values and types', () => {
    const unexpected = rootNames.filter((name) => !expected.includes(name));
    const missing = expected.filter((name) => !rootNames.includes(name));
    expect(unexpected, `exported from the root but not in ROOT (test/package/exports.test.ts): ${unexpected.join(', ')}`).toEqual([]);
    expect(missing, `in ROOT but not exported from the root: ${missing.join(', ')}`).toEqual([]);
  });

  it('has no test helper of laravel-queue-bridge/testing', () => {
    const helpers = modules.get('src/testing/index.ts')!;
    expect(helpers, 'src/testing/index.ts exports none of the helpers this test knows').toEqual(
      expect.arrayContaining(['startRedisServer', 'freePort']),
    );
    const atRoot = helpers.filter((name) => rootNames.includes(name));
    expect(atRoot, `test helpers exported from the root: ${atRoot.join(', ')}`).toEqual([]);
    const runtime = Object.keys(testing).filter((name) => name in top);
    expect(runtime, 'test helpers at the root at run time').toEqual([]);
  });

  it('re-exports every name of laravel-queue-bridge/php (DESIGN.md §1), the same objects', () => {
    const phpNames = modules.get('src/php/index.ts')!;
    const absent = phpNames.filter((name) => !rootNames.includes(name));
    expect(absent, `names of src/php/index.ts missing from the root: ${absent.join(', ')}`).toEqual([]);
    const different = Object.keys(php).filter((name) => top[name] !== (php as Module)[name]);
    expect(different, `root values that are not /php's own: ${different.join(', ')}`).toEqual([]);
  });

  it('takes each value from its group’s index: the root’s and the subpath’s are the same object', () => {
    const wrong: string[] = [];
    for (const [group, names] of Object.entries(ROOT)) {
      const sub = subpaths[group]!;
      for (const name of names)
        if (name in top && top[name] !== sub[name === 'RedisConnectOptions' ? 'ConnectOptions' : name]) wrong.push(`${group}: ${name}`);
    }
    expect(wrong, `root values that are not their subpath's: ${wrong.join(', ')}`).toEqual([]);
  });
});

describe('the subpaths keep what the root leaves out', () => {
  it.each(Object.entries(SUBPATH_ONLY))('laravel-queue-bridge/%s', (group, names) => {
    const sub = subpaths[group]!;
    expect(
      names.filter((name) => !(name in sub)),
      `not exported from src/${group}/index.ts`,
    ).toEqual([]);
    expect(
      names.filter((name) => name in top),
      'internals exported from the root',
    ).toEqual([]);
  });
});

describe('laravel-queue-bridge/laravel, built', () => {
  // require.cache holds every CommonJS module loaded, those an ES module imports included; the ES
  // build carries ioredis in its bundle, seen in the files a loader hook lists (test/helpers/bundle.ts).
  const probe = (entry: string, esm: boolean) => `
const loaded = (name) => Object.keys(require.cache).some((path) => path.includes('/node_modules/' + name + '/'));
(async () => {
  ${esm ? `await import(${JSON.stringify(pathToFileURL(entry).href)});` : `require(${JSON.stringify(entry)});`}
  console.log(JSON.stringify({ ioredis: loaded('ioredis'), ajv: loaded('ajv') }));
})();`;
  const loadedBy = (entry: string, esm: boolean) => {
    const scratch = mkdtempSync(join(tmpdir(), 'lqb-exports-'));
    const trace = join(scratch, 'trace.txt');
    try {
      const { nodeFlags, env, lines } = moduleTrace(trace);
      const seen = JSON.parse(
        execFileSync(process.execPath, [...(esm ? nodeFlags : []), '-e', probe(join(root, entry), esm)], {
          encoding: 'utf8',
          timeout: 30_000,
          env,
        }),
      ) as { ioredis: boolean; ajv: boolean };
      return { ...seen, ioredis: seen.ioredis || (esm && modulesLoaded(lines(), root).includes('ioredis')) };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  };

  it.each([
    ['an ES module', 'dist/laravel/index.js', true],
    ['CommonJS', 'dist/cjs/laravel/index.js', false],
  ] as const)('as %s loads neither ioredis nor ajv at import', (_kind, entry, esm) => {
    expect(loadedBy(entry, esm), `${entry} at import`).toEqual({ ioredis: false, ajv: false });
  });

  it('the probe sees ioredis when /redis loads it (so the check above can fail)', () => {
    expect(loadedBy('dist/redis/index.js', true), 'dist/redis/index.js at import').toMatchObject({ ioredis: true });
    expect(loadedBy('dist/cjs/redis/index.js', false), 'dist/cjs/redis/index.js at import').toMatchObject({ ioredis: true });
  });
});
