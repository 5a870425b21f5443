/**
 * Horizon's layout of a payload the producer has just built, made from its envelope without
 * reading its text (src/horizon/payload.ts, encodedWithAdditions): the same text as Horizon's read and write of it
 * (the road every other payload takes, which the fixtures of Horizon 5.22 check), and the same
 * facts for the pending record as a read of the result gives. Needs no Redis, PHP or database.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { buildJob, buildPayload, type LaravelProfile, type PayloadOptions } from '../../src/laravel/index.js';
import { HorizonRecorder } from '../../src/horizon/index.js';
import { encodeJson, type JsonValue } from '../../src/laravel/json.js';
import { horizonFacts, horizonFactsOf, horizonFactsOfJob, withHorizonAdditions, type HorizonAdditions } from '../../src/horizon/payload.js';

const built = (properties: Record<string, unknown>, options: PayloadOptions = {}, profile: LaravelProfile = '8') =>
  buildPayload(
    buildJob({ className: 'App\\Jobs\\Sync', properties: Object.entries(properties).map(([name, value]) => ({ name, value })) }, profile),
    { profile, ...options },
  );

/** A built payload with more in its envelope, encoded as buildPayload encodes it. */
function withEnvelope(payload: ReturnType<typeof built>, more: Record<string, JsonValue>): ReturnType<typeof built> {
  const envelope = { ...payload.envelope, ...more };
  return { ...payload, envelope, raw: encodeJson(envelope, { unescapedUnicode: true }) };
}

const cases: [string, ReturnType<typeof built>, HorizonAdditions][] = [
  ['plain job, no tags', built({ n: 1 }), { type: 'job', tags: [], silenced: false, pushedAt: '1795636688.4476' }],
  [
    'tags with a backslash, a slash and a quote',
    built({ url: 'https://example.test/a' }),
    { type: 'job', tags: ['App\\Models\\User:42', 'a/b', 'say "hi"'], silenced: true, pushedAt: '1795636688.5' },
  ],
  ['a tag PHP escapes as \\u', built({ n: 2 }), { type: 'event', tags: ['café'], silenced: false, pushedAt: '1795636688' }],
  [
    'non-ASCII in the command (escaped as Horizon escapes it)',
    built({ name: 'Zoë ✓ 😀' }),
    { type: 'job', tags: [], silenced: false, pushedAt: '1.5' },
  ],
  [
    'a float in the envelope (PHP reads it as a float: the slow road)',
    withEnvelope(built({ n: 9 }), { timeout: 1.5 }),
    { type: 'job', tags: [], silenced: false, pushedAt: '1795636688.6' },
  ],
  [
    'a number past 2^53 (the slow road)',
    withEnvelope(built({ n: 10 }), { retryUntil: 2 ** 60 }),
    { type: 'job', tags: [], silenced: false, pushedAt: '1795636688.6' },
  ],
  [
    'an object keyed 0, 1 (a list to PHP: the slow road)',
    withEnvelope(built({ n: 11 }), { extra: { 0: 'a', 1: 'b' } }),
    { type: 'job', tags: [], silenced: false, pushedAt: '1795636688.6' },
  ],
  [
    'an object keyed 1, 2 (kept as an object by PHP)',
    withEnvelope(built({ n: 12 }), { extra: { 1: 'a', 2: 'b' } }),
    { type: 'job', tags: [], silenced: false, pushedAt: '1795636688.6' },
  ],
  [
    'nested objects and lists a createPayloadUsing hook adds',
    withEnvelope(built({ n: 13 }), { trace: { span: 'a/b', ids: [1, 2, 'é'], nested: { on: true, none: null } }, list: [] }),
    { type: 'job', tags: ['x'], silenced: false, pushedAt: '1795636688.6' },
  ],
  [
    'envelope numbers and a backoff list (which Laravel writes as a string)',
    built({ n: 3 }, { maxTries: 5, timeout: 30, retryUntil: 1795636999, backoff: [1, 5, 10] }),
    { type: 'job', tags: ['t'], silenced: false, pushedAt: '1795636688.1234' },
  ],
  [
    'Laravel 12 layout, delay after attempts',
    built({ n: 4 }, { delay: 10, createdAt: 1795636600 }, '12'),
    { type: 'mail', tags: [], silenced: false, pushedAt: '1795636688.9' },
  ],
  [
    'an empty object in the envelope (PHP writes it back as [], the slow road)',
    withEnvelope(built({ n: 5 }), { extra: {} }),
    { type: 'job', tags: [], silenced: false },
  ],
  [
    'a tags key already there (kept in its place, the slow road)',
    withEnvelope(built({ n: 6 }), { tags: ['mine'] }),
    { type: 'job', tags: ['t'], silenced: false },
  ],
  [
    'data with a key "id" of the same value (the id’s text twice, the slow road)',
    (() => {
      const payload = built({ n: 7 });
      const data = payload.envelope.data as Record<string, JsonValue>;
      return withEnvelope(payload, { data: { id: payload.envelope.id as string, ...data } });
    })(),
    { type: 'job', tags: [], silenced: false, pushedAt: '1795636688.2' },
  ],
  [
    'the id’s text inside the command (escaped there, so not a key)',
    built({ note: '"id":"job-8"' }, { id: 'job-8', uuid: '2f1c3a52-8e3b-4c1e-9a57-0b6d1f9e8a08' }),
    { type: 'job', tags: [], silenced: false, pushedAt: '1795636688.3' },
  ],
];

describe('withHorizonAdditions for a payload just built', () => {
  for (const [what, payload, additions] of cases) {
    it(`${what}: the text Horizon's read and write give`, () => {
      const slow = withHorizonAdditions(payload.raw, { ...additions, pushedAt: additions.pushedAt ?? '1795636688.7' });
      const fast = withHorizonAdditions(
        payload.raw,
        { ...additions, pushedAt: additions.pushedAt ?? '1795636688.7' },
        { built: payload.envelope },
      );
      expect(fast, `${what}: the payload as Horizon lays it out`).toBe(slow);
    });
  }

  it('the pending record’s facts, known from the envelope, are those a read of the laid-out payload gives', () => {
    // A client that never connects: laying a payload out sends nothing.
    const client = new Redis({ lazyConnect: true });
    const recorder = new HorizonRecorder(client, { prefix: 'lqb_horizon:', clock: () => 1795636688.4476 });
    for (const [what, payload, additions] of cases) {
      const prepared = recorder.prepared(payload.raw, { command: payload.command, tags: additions.tags, built: payload.envelope });
      expect(prepared.payload, `${what}: prepared as prepare() lays it out`).toBe(
        recorder.prepare(payload.raw, { command: payload.command, tags: additions.tags }),
      );
      // A tags key the envelope holds already is merged by Horizon's read: its facts are then read too.
      const known = !Object.hasOwn(payload.envelope, 'tags');
      expect(prepared.facts !== undefined, `${what}: facts known without a read`).toBe(known);
      if (known) expect(prepared.facts, `${what}: facts`).toEqual(horizonFacts(prepared.payload));
    }
  });

  it('preparedBuilt lays a built payload out from its envelope without encoding its text, and reads the text where PHP’s arrays would change it', () => {
    const client = new Redis({ lazyConnect: true });
    const recorder = new HorizonRecorder(client, { prefix: 'lqb_horizon:', clock: () => 1795636688.4476 });
    for (const [what, payload, additions, readsText] of [
      ['plain job', built({ n: 1 }), { tags: [] }, false],
      ['an empty object in the envelope', withEnvelope(built({ n: 5 }), { extra: {} }), { tags: [] }, true],
    ] as const) {
      let reads = 0;
      const counted = {
        get raw() {
          reads++;
          return payload.raw;
        },
        envelope: payload.envelope,
        command: payload.command,
      };
      const prepared = recorder.preparedBuilt(counted, additions);
      expect(prepared.payload, `${what}: laid out as prepare() lays out its text`).toBe(
        recorder.prepare(payload.raw, { command: payload.command, tags: additions.tags }),
      );
      expect(reads > 0, `${what}: the payload's text read`).toBe(readsText);
    }
  });

  it('buildPayload encodes its text when it is first read, once', () => {
    const payload = built({ n: 1 });
    expect(payload.raw, 'the text: the envelope as Laravel encodes it').toBe(encodeJson(payload.envelope, { unescapedUnicode: true }));
    expect(payload.raw, 'read again: the same string').toBe(payload.raw);
  });

  it('horizonFactsOfJob reads a job’s envelope of plain strings and booleans as horizonFactsOf reads it', () => {
    const envelopes: Record<string, unknown>[] = [
      { uuid: 'u-1', id: 'i-1', displayName: 'App\\Jobs\\X', tags: ['a', 'b:1'], silenced: true, retry_of: 'old-1' },
      { uuid: 'u-2', id: 'i-2' },
      { id: 'i-3', displayName: 'App\\Jobs\\Y', tags: [], silenced: false, retry_of: null },
      // Not plain (a numeric uuid, a tags object): read through horizonFactsOf itself.
      { uuid: 12, tags: { 0: 'x' }, silenced: 'yes' },
    ];
    for (const envelope of envelopes) {
      const job = { uuid: undefined, fields: envelope };
      expect(horizonFactsOfJob(job, envelope), `facts of ${JSON.stringify(envelope)}`).toEqual(horizonFactsOf(envelope));
    }
  });
});
