/**
 * Builders against real payloads: every shared fixture (Laravel 5.8 to 12) is built again from
 * what it says (the job's own properties, its Queueable values, its envelope settings) and
 * must come out byte for byte as that version of Laravel wrote it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  asDate,
  asModelIdentifier,
  modelClass,
  buildDate,
  buildModelIdentifier,
  encodePayload,
  validatePayload,
  buildJob,
  buildListener,
  buildPayload,
  decodePayload,
  type LaravelProfile,
  type UserJobView,
} from '../../src/index.js';
import { LARAVEL_PROFILES, QUEUEABLE_FIELDS } from '../../src/laravel/index.js';
import { PhpFloat, PhpSerializeError, serialize, toJS, type PhpValue, type Visibility } from '../../src/php/index.js';
import { debianPayloads, laravel13Payloads, versionPayloads, type PayloadRecord } from '../helpers/laravel.js';
import { runPhpScript } from '../helpers/php.js';

const profileOf = (version: string): LaravelProfile => (version.startsWith('5.8') ? '5.8' : (version.split('.')[0] as LaravelProfile));
const plain = (value: PhpValue | undefined) => (value === undefined ? undefined : (toJS(value) as never));

/** Debian's 8.83 payloads that a producer could build: plain jobs and listeners, no hooks, no encryption. */
const buildable = debianPayloads().filter(
  (r) => ['job', 'listener', 'chain'].includes(r.expect.kind) && !r.expect.encrypted && !r.expect.hook && !r.expect.horizonEmulated,
);

describe('rebuilding real payloads', () => {
  it.each([
    ...versionPayloads().map((r, i) => [`${r.laravel} #${i}`, r] as const),
    ...buildable.map((r) => [`8.83.26 ${r.name}`, r] as const),
  ])('%s comes out byte for byte', (_, record) => {
    const profile = profileOf(record.laravel);
    const { envelope, view } = decodePayload(record.payload);
    let command;
    if (view.kind === 'listener') {
      const listener = view;
      const own = (name: string) => listener.properties.find((p) => p.name === name)?.value;
      command = buildListener(
        {
          listener: listener.listener,
          method: listener.method,
          arguments: listener.arguments,
          tries: plain(listener.tries),
          maxExceptions: plain(listener.maxExceptions),
          backoff: plain(listener.backoff ?? own('retryAfter')),
          retryUntil: plain(listener.retryUntil ?? own('timeoutAt')),
          timeout: plain(listener.timeout),
          failOnTimeout: plain(own('failOnTimeout')),
        },
        profile,
      );
    } else {
      const job = view as UserJobView;
      const traitNames = new Set<string>([...QUEUEABLE_FIELDS, 'job', 'messageGroup', 'deduplicator']);
      command = buildJob(
        {
          className: job.className,
          properties: job.properties
            .filter((p) => !traitNames.has(p.name))
            .map((p) => ({ name: p.name, value: p.value, visibility: p.visibility, declaringClass: p.declaringClass })),
          queueable: Object.fromEntries(job.properties.filter((p) => traitNames.has(p.name)).map((p) => [p.name, p.value])),
          serializesModels: job.className === 'App\\Jobs\\ImportCsv',
        },
        profile,
      );
    }
    const num = (key: string) => envelope[key] as number | null | undefined;
    const built = buildPayload(command, {
      profile,
      displayName: envelope.displayName as string,
      uuid: envelope.uuid as string | undefined,
      id: envelope.id as string,
      maxTries: num('maxTries'),
      maxExceptions: num('maxExceptions'),
      failOnTimeout: envelope.failOnTimeout as boolean | undefined,
      backoff: envelope.backoff as string | null | undefined,
      timeout: num('timeout'),
      retryUntil: num('retryUntil') ?? num('timeoutAt'),
      delay: num('delay'),
      createdAt: num('createdAt') ?? undefined,
      batchId: (envelope.data as Record<string, string | null>).batchId,
    });
    expect(built.raw).toBe(record.payload);
  });
});

/** What 13.x added to commands after 13.0, and the release that added it. */
const SINCE_13_0: Record<string, string> = { debounceOwner: '13.6.0', uniqueLockOwner: '13.24.0', debounceId: '13.26.0' };
const olderThan = (version: string, than: string) => version.localeCompare(than, 'en', { numeric: true }) < 0;

/** Rebuilds a Laravel 13 fixture with profile 13: the job (or listener) from its properties, the envelope from its fields. */
function rebuild13(record: PayloadRecord): string {
  const { envelope, view } = decodePayload(record.payload);
  let command;
  if (view.kind === 'listener') {
    const own = (name: string) => plain(view.properties.find((p) => p.name === name)?.value);
    command = buildListener(
      {
        listener: view.listener,
        method: view.method,
        arguments: view.arguments,
        tries: plain(view.tries),
        maxExceptions: plain(view.maxExceptions),
        backoff: plain(view.backoff),
        retryUntil: plain(view.retryUntil),
        timeout: plain(view.timeout),
        failOnTimeout: own('failOnTimeout'),
        deleteWhenMissingModels: own('deleteWhenMissingModels'),
      },
      '13',
    );
  } else {
    const job = view as UserJobView;
    const traitNames = new Set<string>([...QUEUEABLE_FIELDS, 'job', 'messageGroup', 'deduplicator', 'debounceOwner', 'uniqueLockOwner']);
    command = buildJob(
      {
        className: job.className,
        properties: job.properties
          .filter((p) => !traitNames.has(p.name))
          .map((p) => ({ name: p.name, value: p.value, visibility: p.visibility, declaringClass: p.declaringClass })),
        queueable: Object.fromEntries(job.properties.filter((p) => traitNames.has(p.name)).map((p) => [p.name, p.value])),
        // A SerializesModels job leaves out Queueable's properties that equal their defaults: its connection among them.
        serializesModels: !job.properties.some((p) => p.name === 'connection'),
      },
      '13',
    );
  }
  // Before a 13.x release added a property, that release's payloads do not have it.
  for (const [name, since] of Object.entries(SINCE_13_0)) if (olderThan(record.laravel, since)) command.props.delete(name);
  const num = (key: string) => envelope[key] as number | null;
  return buildPayload(command, {
    profile: '13',
    displayName: envelope.displayName as string,
    uuid: envelope.uuid as string,
    id: envelope.id as string,
    maxTries: num('maxTries'),
    maxExceptions: num('maxExceptions'),
    failOnTimeout: envelope.failOnTimeout as boolean,
    backoff: envelope.backoff as string | null,
    timeout: num('timeout'),
    retryUntil: num('retryUntil'),
    deleteWhenMissingModels: envelope.deleteWhenMissingModels as boolean,
    delay: num('delay'),
    createdAt: num('createdAt')!,
    batchId: (envelope.data as Record<string, string | null>).batchId,
  }).raw;
}

describe('rebuilding Laravel 13 payloads with profile 13', () => {
  const records = laravel13Payloads();
  it('covers 13.0.0 and 13.26.1', () => {
    expect(new Set(records.map((r) => r.laravel))).toEqual(new Set(['13.0.0', '13.26.1']));
  });
  it.each(records.map((r, i) => [`${r.laravel} #${i} ${JSON.parse(r.payload).displayName}`, r] as const))(
    '%s comes out byte for byte',
    (_, record) => {
      expect(rebuild13(record)).toBe(record.payload);
      expect(decodePayload(record.payload).profile).toBe('13');
    },
  );
  it('13.26.1 commands carry debounceOwner and uniqueLockOwner ("" unless taken), a listener its debounceId, where profile 13 writes them', () => {
    const latest = records.filter((r) => r.laravel === '13.26.1').map((r) => decodePayload(r.payload).view as UserJobView);
    const listener = latest.find((v) => v.className === 'Illuminate\\Events\\CallQueuedListener')!;
    const names = listener.properties.map((p) => p.name);
    expect(names.slice(names.indexOf('uniqueFor'), names.indexOf('uniqueFor') + 3)).toEqual(['uniqueFor', 'debounceId', 'job']);
    expect(names.slice(names.indexOf('deduplicator'), names.indexOf('deduplicator') + 4)).toEqual([
      'deduplicator',
      'debounceOwner',
      'uniqueLockOwner',
      'delay',
    ]);
    const built = buildJob({ className: 'App\\Jobs\\X', serializesModels: false }, '13');
    expect(built.props.keys.slice(3, 7)).toEqual(['messageGroup', 'deduplicator', 'debounceOwner', 'uniqueLockOwner']);
    expect(built.props.get('debounceOwner')).toBe('');
  });
});

describe('builders', () => {
  it('keep a float a float and a visibility where the hints say', () => {
    const command = buildJob(
      {
        className: 'App\\Jobs\\Charge',
        properties: [{ name: 'amount', value: 10, hint: 'float', visibility: 'protected' }],
        serializesModels: false,
      },
      '8',
    );
    expect(command.props.get('\0*\0amount')).toEqual(new PhpFloat(10));
  });

  it("refuse an own property named as a Queueable (or InteractsWithQueue) one, which the trait's slot would silently overwrite", () => {
    for (const profile of LARAVEL_PROFILES) {
      for (const name of ['queue', 'delay', 'connection', 'chained', 'job']) {
        expect(() => buildJob({ className: 'App\\Jobs\\X', properties: { n: 1, [name]: 'given' } }, profile), `${profile} ${name}`).toThrow(
          new RegExp(`App\\\\Jobs\\\\X: \\$${name} is Laravel's Queueable \\(or InteractsWithQueue\\) property`),
        );
      }
    }
    // Without InteractsWithQueue the class has no $job of the trait's: one of its own is its own.
    expect(toJS(buildJob({ className: 'App\\Jobs\\X', properties: { job: 'mine' }, interactsWithQueue: false }, '8'))).toMatchObject({
      job: 'mine',
    });
  });

  it('name the property a value PHP cannot hold sits in, from the property down', () => {
    const error = (properties: Record<string, unknown>) => {
      try {
        buildJob({ className: 'App\\Jobs\\X', properties });
      } catch (caught) {
        return caught as PhpSerializeError;
      }
      throw new Error(`${Object.keys(properties).join()}: built`);
    };
    expect(error({ n: 1, onDone: () => 1 }), 'a function as a property').toMatchObject({
      path: '$.onDone',
      message: 'cannot make a PHP value of a JavaScript function at $.onDone',
    });
    expect(error({ items: [1, { deep: Symbol('s') }] }).path, 'a symbol inside a property').toBe('$.items[1].deep');
    const looped: Record<string, unknown> = {};
    looped.self = [looped];
    expect(error({ tree: looped }), 'a cycle inside a property').toBeInstanceOf(PhpSerializeError);
  });
});

describe('built envelopes, every profile (generated)', () => {
  const name = fc.stringMatching(/^[a-z][A-Za-z0-9_]{0,11}$/);
  const plainValue = fc.oneof(
    fc.integer(),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );
  const spec = fc.record({
    profile: fc.constantFrom(...LARAVEL_PROFILES),
    className: fc.constantFrom('App\\Jobs\\Import', 'App\\Jobs\\Deep\\Nested\\Sync', 'Ünïcode\\Job'),
    props: fc.uniqueArray(fc.tuple(name, plainValue, fc.constantFrom('public', 'protected', 'private') as fc.Arbitrary<Visibility>), {
      selector: ([n]) => n,
      maxLength: 5,
    }),
    queue: fc.option(fc.constantFrom('default', 'emails', '{hash}'), { nil: undefined }),
    maxTries: fc.option(fc.nat(10), { nil: null }),
    timeout: fc.option(fc.nat(600), { nil: null }),
    backoff: fc.option(fc.array(fc.nat(100), { minLength: 1, maxLength: 3 }), { nil: null }),
  });
  const samples = fc.sample(spec, { numRuns: 300, seed: 42 });
  const built = samples.map((s) => {
    const command = buildJob(
      {
        className: s.className,
        properties: s.props.map(([n, value, visibility]) => ({ name: n, value, visibility })),
        queueable: s.queue ? { queue: s.queue } : {},
      },
      s.profile,
    );
    return {
      spec: s,
      payload: buildPayload(command, { profile: s.profile, maxTries: s.maxTries, timeout: s.timeout, backoff: s.backoff }),
    };
  });

  it('decode back to the values they were built from, and pass their version’s schema', () => {
    for (const { spec: s, payload } of built) {
      const decoded = decodePayload(payload.raw);
      expect(encodePayload(decoded)).toBe(payload.raw);
      expect(decoded.envelope.maxTries).toBe(s.maxTries);
      // Before 8 the envelope had no backoff; the retry delay was the job's own business.
      if (['5.8', '6', '7'].includes(s.profile)) expect('backoff' in decoded.envelope).toBe(false);
      else expect(decoded.envelope.backoff).toBe(s.backoff === null ? null : s.backoff.join(','));
      const props = toJS(decoded.command!) as Record<string, unknown>;
      for (const [n, value] of s.props) expect(props[n], n).toEqual(value);
      expect(validatePayload(JSON.parse(payload.raw), s.profile)).toEqual([]);
    }
  });

  it('real PHP unserializes each command to an object with the same properties', () => {
    const commands = built.map(({ payload }) => serialize(payload.command).toString('base64'));
    const described = runPhpScript('describe-objects.php', commands.join('\n') + '\n')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(described).toHaveLength(built.length);
    built.forEach(({ spec: s, payload }, i) => {
      const php = described[i];
      expect(php['@class']).toBe(s.className);
      const ours = toJS(payload.command) as Record<string, unknown>;
      expect(Object.keys(php.props).sort()).toEqual(Object.keys(ours).sort());
      for (const [n, value] of s.props) {
        const theirs = php.props[n];
        const isFloat = typeof value === 'number' && (!Number.isSafeInteger(value) || Object.is(value, -0));
        expect(isFloat ? theirs['@float'] : theirs, n).toEqual(value);
      }
    });
  });
});

describe('value builders against what Laravel 8.83 wrote', () => {
  const record = (name: string) => debianPayloads().find((r) => r.name === name)!;
  const props = (name: string) => {
    const { view } = decodePayload(record(name).payload);
    return (view as UserJobView).properties;
  };

  it('buildDate writes a Carbon as PHP did, in its zone and to the microsecond', () => {
    let dates = 0;
    for (const prop of props('job/dates')) {
      const date = asDate(prop.value);
      if (!date) continue;
      dates++;
      const built = buildDate(date.date, { className: date.className, timezone: date.timezone, microseconds: date.microseconds });
      expect(serialize(built).toString('utf8'), prop.name).toBe(serialize(prop.value).toString('utf8'));
    }
    expect(dates).toBe(4);
  });

  it('buildModelIdentifier writes a model (or a collection of them) as SerializesModels did', () => {
    for (const prop of props('job/models')) {
      const model = asModelIdentifier(prop.value);
      if (!model) continue;
      expect(serialize(buildModelIdentifier(model, '8')).toString('utf8'), prop.name).toBe(serialize(prop.value).toString('utf8'));
    }
  });
});

describe('morph-map aliases in ModelIdentifier::$class (12.50+)', () => {
  it('a class with no namespace separator reads as an alias, resolved by the morph map when given', () => {
    const alias = asModelIdentifier(buildModelIdentifier({ class: 'user', id: 7 }, '12'))!;
    expect(alias.classIsAlias).toBe(true);
    expect(modelClass(alias, { user: 'App\\Models\\User' })).toBe('App\\Models\\User');
    expect(modelClass(alias)).toBe('user');
    const full = asModelIdentifier(buildModelIdentifier({ class: 'App\\Models\\User', id: 7 }, '12'))!;
    expect([full.classIsAlias, modelClass(full, { user: 'X' })]).toEqual([false, 'App\\Models\\User']);
  });
});

describe("the database driver's envelope (Laravel's createPayload alone: no id, no attempts)", () => {
  it.each(['8', '11', '12', '13'] as const)(
    'profile %s: the RedisQueue envelope less the id and attempts RedisQueue appends',
    (profile) => {
      const command = buildJob({ className: 'App\\Jobs\\Noop', properties: { n: 1 } }, profile);
      const options = { profile, uuid: '7d7c1b1e-0000-4000-8000-000000000001', createdAt: 1_700_000_000, delay: 5 };
      const redis = buildPayload(command, { ...options, id: 'abcdefghijklmnopqrstuvwxyz012345', attempts: 0 }).raw;
      const database = buildPayload(command, { ...options, driver: 'database' });
      expect(database.raw, 'the payload').toBe(redis.replace(',"id":"abcdefghijklmnopqrstuvwxyz012345","attempts":0', ''));
      expect(['id' in database.envelope, 'attempts' in database.envelope], 'id, attempts in the envelope').toEqual([false, false]);
    },
  );
});
