/**
 * The payload schemas against real payloads: fixtures/laravel's multi-version set, written by Laravel 5.8.38 … 12.67.0
 * themselves, as pushed and as Redis's cjson re-encoded them on reserve. Every wrong payload here is
 * a fixture with one thing changed, and what each version must carry is read off the fixtures.
 */
import { describe, expect, it } from 'vitest';
import {
  LARAVEL_PROFILES,
  PayloadSchemaError,
  assertValidPayload,
  schemaFor,
  validatePayload,
  type LaravelProfile,
  type PayloadIssue,
} from '../../src/laravel/index.js';
import { laravel13Payloads, versionPayloads } from '../helpers/laravel.js';
import { runPhpScript } from '../helpers/php.js';

type Json = Record<string, any>;

interface Fixture {
  laravel: string;
  payload: string;
  reserved: string;
}

const fixtures: Fixture[] = [...versionPayloads(), ...laravel13Payloads()];

const PROFILE_OF: Record<string, LaravelProfile> = {
  '5.8.38': '5.8',
  '6.20.45': '6',
  '7.30.7': '7',
  '8.83.29': '8',
  '9.52.22': '9',
  '10.50.3': '10',
  '11.56.0': '11',
  '12.67.0': '12',
  '13.0.0': '13',
  '13.26.1': '13',
};
const CALL_QUEUED_HANDLER = 'Illuminate\\Queue\\CallQueuedHandler@call';

const profileOf = (fixture: Fixture): LaravelProfile => {
  const profile = PROFILE_OF[fixture.laravel];
  if (!profile) throw new Error(`no profile for Laravel ${fixture.laravel}`);
  return profile;
};
const ofProfile = (profile: LaravelProfile) => fixtures.filter((f) => profileOf(f) === profile);
/** Both forms of a fixture, freshly parsed so a test may change them. */
const forms = (fixture: Fixture): [string, Json][] => [
  ['payload', JSON.parse(fixture.payload) as Json],
  ['reserved', JSON.parse(fixture.reserved) as Json],
];
const firstOf = (profile: LaravelProfile): Fixture => {
  const fixture = ofProfile(profile)[0];
  if (!fixture) throw new Error(`no fixture for profile ${profile}`);
  return fixture;
};
const paths = (issues: PayloadIssue[]) => [...new Set(issues.map((issue) => issue.path))].sort();

/** The keys every fixture of a version carries: what that version always writes for an object job. */
function alwaysWritten(profile: LaravelProfile): Set<string> {
  const keySets = ofProfile(profile).map((f) => new Set(Object.keys(JSON.parse(f.payload) as Json)));
  return new Set([...keySets[0]!].filter((key) => keySets.every((keys) => keys.has(key))));
}

/**
 * Keys a profile lets a payload leave out although its fixture version writes them, because earlier
 * releases of the same major did not (see each schema's description). 12's two come together.
 */
const OPTIONAL: Partial<Record<LaravelProfile, string[]>> = {
  '5.8': ['delay'], // 5.8.0 – 5.8.13
  '8': ['failOnTimeout'], // 8.0 – 8.42
  '12': ['createdAt', 'delay'], // 12.0 – 12.10
};

describe('fixtures of Laravel 5.8 to 13', () => {
  it('hold 25 payloads from each of the eight versions', () => {
    expect(fixtures).toHaveLength(320);
    for (const profile of LARAVEL_PROFILES) expect(ofProfile(profile)).toHaveLength(profile === '13' ? 120 : 25);
  });

  it.each(fixtures.map((fixture, i) => [`${fixture.laravel} #${i}`, fixture] as const))(
    '%s validates against its own profile, as pushed and as reserved',
    (_, fixture) => {
      for (const [form, value] of forms(fixture)) {
        expect({ form, issues: validatePayload(value, profileOf(fixture)) }).toEqual({ form, issues: [] });
      }
    },
  );
});

describe('one thing wrong', () => {
  for (const profile of LARAVEL_PROFILES) {
    const fixture = firstOf(profile);

    it(`${profile}: a mutation is reported at its own path and nowhere else`, () => {
      for (const [form, original] of forms(fixture)) {
        const cases: [string, (p: Json) => void][] = [
          ['/attempts', (p) => (p.attempts = String(p.attempts))],
          ['/data/commandName', (p) => delete p.data.commandName],
          ['/data/command', (p) => (p.data.command = 42)],
          ['/maxTries', (p) => (p.maxTries = 1.5)],
          ['/timeout', (p) => (p.timeout = '60')],
          ['/id', (p) => (p.id = 'short')],
          ['/data', (p) => (p.data = 'not an object')],
        ];
        if ('uuid' in original) {
          cases.push(['/uuid', (p) => delete p.uuid]);
          cases.push(['/uuid', (p) => (p.uuid = p.uuid.toUpperCase().replace(/-/g, ''))]);
        }
        if ('backoff' in original) cases.push(['/backoff', (p) => (p.backoff = '5,x')]);
        if ('failOnTimeout' in original) cases.push(['/failOnTimeout', (p) => (p.failOnTimeout = 0)]);
        for (const [path, mutate] of cases) {
          const payload = structuredClone(original);
          mutate(payload);
          expect({ form, mutated: path, issues: paths(validatePayload(payload, profile)) }).toEqual({
            form,
            mutated: path,
            issues: [path],
          });
        }
      }
    });
  }

  it('accepts the backoffs Laravel 8.83 writes for floats, negatives, one int, a string and an empty array', () => {
    const payloads = JSON.parse(runPhpScript('backoff-payloads.php')) as string[];
    expect(payloads.map((payload) => JSON.parse(payload).backoff)).toEqual(['1.5,2', '5', '10,20', '', '-1,0', '2.25']);
    for (const payload of payloads) expect(validatePayload(JSON.parse(payload), '8')).toEqual([]);
  });

  it('accepts the empty backoff Laravel writes for `$backoff = []`, and nothing else that is not comma-joined numbers', () => {
    for (const profile of LARAVEL_PROFILES.filter((p) => alwaysWritten(p).has('backoff'))) {
      for (const [form, payload] of forms(firstOf(profile))) {
        for (const backoff of ['', '7', '3,18,60']) {
          expect({ profile, form, backoff, issues: validatePayload({ ...payload, backoff }, profile) }).toEqual({
            profile,
            form,
            backoff,
            issues: [],
          });
        }
        for (const backoff of ['5,', ',5', '5, 10', '1.', '.5', 5, [5, 10]]) {
          expect({ profile, form, backoff, issues: paths(validatePayload({ ...payload, backoff }, profile)) }).toEqual({
            profile,
            form,
            backoff,
            issues: ['/backoff'],
          });
        }
      }
    }
  });

  it('says what is wrong', () => {
    const payload = JSON.parse(firstOf('8').payload) as Json;
    payload.attempts = '0';
    payload.maxTries = 1.5;
    delete payload.uuid;
    const issues = validatePayload(payload, '8');
    expect(issues).toContainEqual({ path: '/attempts', message: 'must be integer' });
    expect(issues).toContainEqual({ path: '/maxTries', message: 'must be integer or null' });
    expect(issues).toContainEqual({ path: '/uuid', message: 'is required but missing' });
  });

  it('reports a payload that is not an object at the root', () => {
    expect(validatePayload(null, '8')).toEqual([{ path: '', message: 'must be object' }]);
    expect(validatePayload([], '12')).toEqual([{ path: '', message: 'must be object' }]);
  });
});

describe('across versions', () => {
  /** What profile `to` must report for a payload of version `from`, read off the fixtures' keys. */
  function expectedMissing(from: LaravelProfile, to: LaravelProfile): string[] {
    const has = new Set(Object.keys(JSON.parse(firstOf(from).payload) as Json));
    const optional = OPTIONAL[to] ?? [];
    const missing = [...alwaysWritten(to)].filter((key) => !optional.includes(key) && !has.has(key));
    // 12.11+ writes createdAt and delay together, so one without the other is wrong.
    if (to === '12' && has.has('createdAt') !== has.has('delay')) missing.push(has.has('delay') ? 'createdAt' : 'delay');
    // Every 13.x object job carries data.batchId.
    const data = (JSON.parse(firstOf(from).payload) as { data: Json }).data;
    if (to === '13' && !('batchId' in data)) missing.push('data/batchId');
    return missing.map((key) => `/${key}`).sort();
  }

  it('a 7 payload fails the 8 profile for want of backoff and retryUntil', () => {
    const seven = alwaysWritten('7');
    for (const key of ['backoff', 'retryUntil']) expect(seven.has(key)).toBe(false);
    expect(expectedMissing('7', '8')).toEqual(['/backoff', '/retryUntil']);
    for (const [, payload] of forms(firstOf('7'))) expect(paths(validatePayload(payload, '8'))).toEqual(['/backoff', '/retryUntil']);
  });

  it('an 8 payload fails the 6 profile, which needs delay and timeoutAt', () => {
    const eight = alwaysWritten('8');
    for (const key of ['delay', 'timeoutAt']) expect(eight.has(key)).toBe(false);
    expect(expectedMissing('8', '6')).toEqual(['/delay', '/timeoutAt']);
    for (const [, payload] of forms(firstOf('8'))) expect(paths(validatePayload(payload, '6'))).toEqual(['/delay', '/timeoutAt']);
  });

  it('every version against every profile reports exactly the keys that profile needs and the payload lacks', () => {
    for (const from of LARAVEL_PROFILES) {
      for (const to of LARAVEL_PROFILES) {
        for (const [form, payload] of forms(firstOf(from))) {
          expect({ from, to, form, issues: paths(validatePayload(payload, to)) }).toEqual({
            from,
            to,
            form,
            issues: expectedMissing(from, to),
          });
        }
      }
    }
  });
});

describe('earlier releases of a major', () => {
  /** A fixture of `profile` with the keys an earlier release did not write taken out. */
  function without(profile: LaravelProfile, keys: string[], dataKeys: string[] = []): Json[] {
    return forms(firstOf(profile)).map(([, payload]) => {
      for (const key of keys) {
        expect(payload).toHaveProperty(key);
        delete payload[key];
      }
      for (const key of dataKeys) {
        expect(payload.data).toHaveProperty(key);
        delete payload.data[key];
      }
      return payload;
    });
  }

  it('5.8.0 – 5.8.13 (no delay) pass profile 5.8 but not 6', () => {
    for (const payload of without('5.8', ['delay'])) {
      expect(validatePayload(payload, '5.8')).toEqual([]);
      expect(paths(validatePayload(payload, '6'))).toEqual(['/delay']);
    }
  });

  it('8.0 – 8.42 (no failOnTimeout) pass profile 8 but not 9', () => {
    for (const payload of without('8', ['failOnTimeout'])) {
      expect(validatePayload(payload, '8')).toEqual([]);
      expect(paths(validatePayload(payload, '9'))).toEqual(['/failOnTimeout']);
    }
  });

  it('12.0 – 12.10 (no createdAt, delay, batchId) and 12.11 – 12.50 (no batchId) pass profile 12', () => {
    for (const payload of without('12', ['createdAt', 'delay'], ['batchId'])) expect(validatePayload(payload, '12')).toEqual([]);
    for (const payload of without('12', [], ['batchId'])) expect(validatePayload(payload, '12')).toEqual([]);
  });

  it('12: createdAt and delay come together, batchId is a string or null', () => {
    for (const payload of without('12', ['createdAt'])) {
      expect(validatePayload(payload, '12')).toEqual([{ path: '/createdAt', message: 'is required when delay is present' }]);
    }
    for (const payload of without('12', ['delay'])) expect(paths(validatePayload(payload, '12'))).toEqual(['/delay']);
    for (const [, payload] of forms(firstOf('12'))) {
      payload.data.batchId = '9f6a1c2e-0d1b-4c7e-8a55-3f0e6b1d2c4a';
      expect(validatePayload(payload, '12')).toEqual([]);
      payload.data.batchId = 7;
      expect(paths(validatePayload(payload, '12'))).toEqual(['/data/batchId']);
    }
  });
});

describe('string jobs and cjson', () => {
  /**
   * A fixture turned into what push('Class@method', $data) writes: the handler as `job`, the raw data,
   * and no timeoutAt / retryUntil / deleteWhenMissingModels (Queue::createStringPayload never writes those).
   */
  function stringJob(payload: Json, data: unknown): Json {
    const job: Json = { ...payload, job: 'App\\Jobs\\LegacyImport@handle', displayName: 'App\\Jobs\\LegacyImport', data };
    delete job.timeoutAt;
    delete job.retryUntil;
    delete job.deleteWhenMissingModels;
    return job;
  }

  for (const profile of LARAVEL_PROFILES) {
    it(`${profile}: a string job may carry any data, an object job may not`, () => {
      for (const [form, payload] of forms(firstOf(profile))) {
        // '' is push()'s default; cjson writes an empty PHP array as {} in the reserved copy.
        for (const data of ['', [], {}, ['a', 1], { rows: [1, 2] }, null, 5]) {
          expect({ form, data, issues: validatePayload(stringJob(payload, data), profile) }).toEqual({ form, data, issues: [] });
        }
        const objectOnly = 'retryUntil' in payload ? '/retryUntil' : '/timeoutAt';
        const asObjectJob = { ...stringJob(payload, {}), job: CALL_QUEUED_HANDLER };
        // 13.x object jobs also always carry deleteWhenMissingModels and data.batchId.
        const since13 = profile === '13' ? ['/deleteWhenMissingModels', '/data/batchId'] : [];
        expect(paths(validatePayload(asObjectJob, profile))).toEqual(['/data/command', '/data/commandName', objectOnly, ...since13].sort());
      }
    });
  }

  it('reads numbers cjson printed in exponent form as the integers they are', () => {
    const fixture = firstOf('8');
    expect(fixture.reserved).toContain('"retryUntil":null');
    const reserved = JSON.parse(fixture.reserved.replace('"retryUntil":null', '"retryUntil":1.2345678901235e+16')) as Json;
    expect(reserved.retryUntil).toBe(12345678901235000);
    expect(validatePayload(reserved, '8')).toEqual([]);
  });
});

describe('Horizon', () => {
  /** A fixture as Horizon would push it: its four keys appended, and id = uuid under Horizon 5 (Laravel 8+). */
  function horizonize(payload: Json, tags: unknown): Json {
    const type = payload.data.commandName === 'Illuminate\\Events\\CallQueuedListener' ? 'event' : 'job';
    const id = 'uuid' in payload && !('timeoutAt' in payload) ? payload.uuid : '1042';
    return { ...payload, id, type, tags, silenced: false, pushedAt: '1700000000.1234' };
  }

  for (const profile of LARAVEL_PROFILES) {
    it(`${profile}: Horizon's keys validate with {horizon: true}, wrong ones fail`, () => {
      for (const [form, payload] of forms(firstOf(profile))) {
        // Horizon needs its keys when asked to check them, and only then.
        expect(paths(validatePayload(payload, profile, { horizon: true }))).toEqual(['/pushedAt', '/tags', '/type']);
        expect(validatePayload(payload, profile)).toEqual([]);

        // An empty tag list comes back from cjson as {}.
        for (const tags of [[], {}, ['App\\Models\\Order:17', 'import']]) {
          const pushed = horizonize(payload, tags);
          expect({ form, tags, issues: validatePayload(pushed, profile, { horizon: true }) }).toEqual({ form, tags, issues: [] });
          expect(validatePayload(pushed, profile)).toEqual([]);
        }

        const cases: [string, (p: Json) => void][] = [
          ['/type', (p) => (p.type = 'queue')],
          ['/tags/1', (p) => (p.tags = ['ok', 3])],
          ['/tags', (p) => (p.tags = { 0: 'order' })],
          ['/tags', (p) => (p.tags = 'order')],
          ['/silenced', (p) => (p.silenced = 'yes')],
          ['/pushedAt', (p) => (p.pushedAt = 1700000000.1234)],
          ['/pushedAt', (p) => (p.pushedAt = 'yesterday')],
        ];
        for (const [path, mutate] of cases) {
          const pushed = horizonize(payload, []);
          mutate(pushed);
          expect({ form, mutated: path, issues: paths(validatePayload(pushed, profile, { horizon: true })) }).toEqual({
            form,
            mutated: path,
            issues: [path],
          });
        }
      }
    });
  }

  it('silenced is optional (Horizon before 5.14 did not write it)', () => {
    const pushed = horizonize(JSON.parse(firstOf('9').payload) as Json, []);
    delete pushed.silenced;
    expect(validatePayload(pushed, '9', { horizon: true })).toEqual([]);
  });
});

describe('assertValidPayload and schemaFor', () => {
  it('throws a PayloadSchemaError naming the first problem, and passes a good payload', () => {
    const payload = JSON.parse(firstOf('11').reserved) as Json;
    expect(() => assertValidPayload(payload, '11')).not.toThrow();
    payload.attempts = 'one';
    let thrown: unknown;
    try {
      assertValidPayload(payload, '11');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PayloadSchemaError);
    const error = thrown as PayloadSchemaError;
    expect(error.issues).toEqual([{ path: '/attempts', message: 'must be integer' }]);
    expect(error.message).toContain('/attempts');
    expect(error.message).toContain('must be integer');
    expect(error.message).toContain('Laravel 11');
  });

  it('rejects an unknown profile', () => {
    expect(() => validatePayload({}, '14' as LaravelProfile)).toThrow(RangeError);
  });

  it('gives each profile its schema, with a description for every field', () => {
    expect(LARAVEL_PROFILES).toEqual(['5.8', '6', '7', '8', '9', '10', '11', '12', '13']);
    for (const profile of LARAVEL_PROFILES) {
      const schema = schemaFor(profile);
      expect(schema.$id).toBe(`https://laravel-queue-bridge.dev/schemas/payload-${profile}.json`);
      expect(schema.title).toEqual(expect.any(String));
      const properties = schema.properties as Record<string, { description?: unknown }>;
      // Every key a fixture of this version carries is described.
      for (const key of alwaysWritten(profile))
        expect({ key, described: typeof properties[key]?.description }).toEqual({ key, described: 'string' });
      expect(schema.required).toEqual(expect.arrayContaining(['job', 'data', 'id', 'attempts']));
    }
  });
});
