/**
 * The payloads Debian's real Laravel 8.83 queued into real Redis (fixtures/laravel, written by
 * php-fixture-gen/laravel-fixtures.php): every one decodes, re-encodes byte for byte, passes
 * the 8.x schema in both forms, decrypts where encrypted, and its typed view says what PHP
 * says it queued, down to models, dates, enums, collections, chains, listeners,
 * notifications and mailables.
 */
import { describe, expect, it } from 'vitest';
import {
  Encrypter,
  asCollection,
  asDate,
  asEloquentModel,
  asEnum,
  asModelIdentifier,
  decodePayload,
  encodePayload,
  validatePayload,
  viewCommand,
  type JobView,
} from '../../src/index.js';
import { plainJson } from '../../src/laravel/index.js';
import { PhpArray, PhpObject, deref, demangle, toJS, type PhpValue } from '../../src/php/index.js';
import { asJson, debianPayloads, type PayloadRecord } from '../helpers/laravel.js';

const records = debianPayloads();
const KIND: Record<string, JobView['kind']> = {
  job: 'job',
  chain: 'job',
  'encrypted-job': 'job',
  'string-job': 'string',
  listener: 'listener',
  notification: 'notification',
  mailable: 'mailable',
  closure: 'closure',
};

/** A value rendered the way the fixture's README says PHP rendered it. */
function render(value: PhpValue): unknown {
  const model = asModelIdentifier(value) ?? asEloquentModel(value);
  if (model) return { class: model.class, id: model.id };
  const date = asDate(value);
  if (date) return { date: date.text, timezone: date.timezone };
  const enumCase = asEnum(value);
  if (enumCase) return { enum: enumCase.className, case: enumCase.case };
  const v = deref(value);
  if (v instanceof PhpObject) {
    if (/SerializableClosure$/.test(v.className)) return { closure: v.className };
    const collection = asCollection(v);
    if (collection && v.className === 'Illuminate\\Support\\Collection')
      return { collection: v.className, items: render(collection.items) };
    const props: Record<string, unknown> = {};
    for (const [key, item] of v.props) props[demangle(key).name] = render(item);
    return { class: v.className, props };
  }
  if (v instanceof PhpArray) {
    if (v.isList()) return v.values.map(render);
    return Object.fromEntries([...v].map(([k, item]) => [String(k), render(item)]));
  }
  return asJson(toJS(v));
}

function commandOf(record: PayloadRecord) {
  const decoded = decodePayload(record.payload);
  if (!decoded.encrypted) return { decoded, command: decoded.command, view: decoded.view };
  const command = new Encrypter(record.appKey!, record.cipher).decryptCommand((decoded.envelope.data as { command: string }).command);
  return { decoded, command, view: viewCommand(command) };
}

describe('payloads Debian’s Laravel 8.83 queued', () => {
  it('are many, of every kind', () => {
    expect(records.length).toBeGreaterThanOrEqual(40);
    expect(new Set(records.map((r) => r.expect.kind))).toEqual(new Set(Object.keys(KIND)));
  });

  it.each(records.map((r) => [r.name!, r] as const))('%s: re-encodes byte for byte; both forms pass the 8.x schema', (_, record) => {
    const decoded = decodePayload(record.payload);
    expect(encodePayload(decoded)).toBe(record.payload);
    expect(decoded.profile).toBe('8');
    const horizon = Boolean(record.expect.horizonEmulated);
    expect(validatePayload(JSON.parse(record.payload), '8', { horizon })).toEqual([]);
    expect(validatePayload(JSON.parse(record.reserved), '8', { horizon })).toEqual([]);
    const reserved = decodePayload(record.reserved);
    expect(reserved.envelope.attempts).toBe(1);
    expect(reserved.name).toBe(decoded.name);
  });

  it.each(records.map((r) => [r.name!, r] as const))('%s: the typed view agrees with PHP', (_, record) => {
    const expected = record.expect;
    const { decoded, command, view } = commandOf(record);
    expect(view.kind).toBe(KIND[expected.kind]);
    expect(decoded.encrypted).toBe(Boolean(expected.encrypted) || expected.kind === 'encrypted-job');
    expect(decoded.envelope.displayName).toBe(expected.displayName);
    if (view.kind === 'string') {
      expect(view.handler).toBe(expected.job);
      expect(asJson(view.data)).toEqual(expected.data);
      return;
    }
    expect(decoded.name).toBe(expected.commandName);
    const props = Object.fromEntries(('properties' in view ? view.properties : []).map((p) => [p.name, p.value]));
    for (const [name, value] of Object.entries(expected.props ?? {})) expect(render(props[name] ?? null), name).toEqual(value);

    const e = decoded.envelope;
    // The fixture's JSON rounds ints past 2^53 (maxTries 12345678901234567); compare as JSON does.
    expect(asJson(e.maxTries)).toBe(expected.maxTries);
    expect(asJson(plainJson(e.timeout))).toBe(expected.timeout);
    expect(e.backoff).toBe(expected.backoff === null ? null : [expected.backoff].flat().join(','));
    expect(e.retryUntil).toBe(expected.retryUntil);
    expect(e.maxExceptions).toBe(expected.maxExceptions);
    expect(e.failOnTimeout).toBe(expected.failOnTimeout);

    if (expected.chained)
      expect(
        ('chain' in view ? view.chain : []).map((link) =>
          typeof link === 'string' ? link : 'className' in link ? link.className : link.kind,
        ),
      ).toEqual(expected.chained);
    if (view.kind === 'listener') {
      expect(`${view.listener}@${view.method}`).toBe(expected.listener);
      if (expected.event?.class) expect(render(view.arguments[0]!)).toEqual(expected.event);
    }
    if (view.kind === 'notification') {
      // PHP lists the notifiables one by one; Laravel stores them as one collection.
      const notifiables = render(view.notifiables!) as { class: string; id: unknown[] } & { items?: unknown };
      const listed = 'items' in notifiables ? notifiables.items : notifiables.id.map((id) => ({ class: notifiables.class, id }));
      expect(listed).toEqual([expected.notifiables].flat());
      expect((deref(view.notification!) as PhpObject).className).toBe(expected.notification);
      expect(asJson(toJS(view.channels!))).toEqual([expected.channels].flat());
    }
    if (view.kind === 'mailable') expect((deref(view.mailable!) as PhpObject).className).toBe(expected.mailable);
    for (const [path, identifier] of Object.entries(expected.modelIdentifiers ?? {})) {
      const found = asModelIdentifier(at(command!, path)!);
      expect(found, path).toMatchObject(identifier as object);
    }
    if (expected.hook) {
      const keys = Object.keys(e);
      for (const [key, value] of Object.entries(expected.hook)) {
        expect(asJson(e[key]), key).toEqual(value);
        expect(keys.indexOf(key)).toBeGreaterThan(keys.indexOf('data'));
        expect(keys.indexOf(key)).toBeLessThan(keys.indexOf('id'));
      }
    }
  });

  it('turns PHP dates into the right instants, across a DST change and an offset zone', () => {
    const { view } = commandOf(records.find((r) => r.name === 'job/dates')!);
    const props = Object.fromEntries(('properties' in view ? view.properties : []).map((p) => [p.name, asDate(p.value)!]));
    expect(props.startsAt!.date.toISOString()).toBe('2025-03-30T01:30:00.123Z');
    expect(props.startsAt!.microseconds).toBe(123456);
    expect(props.localStart!.date.toISOString()).toBe('2025-03-30T01:30:00.000Z'); // 03:30 in Paris, just after the clocks went forward
    expect(props.endsAt!.date.toISOString()).toBe('2025-03-30T06:45:00.000Z'); // New York on EDT
    expect(props.createdAt!.date.toISOString()).toBe('2025-01-01T21:34:05.000Z'); // +05:30
    expect(props.createdAt!.microseconds).toBe(6);
  });

  it('reports queued closures as not runnable outside PHP', () => {
    for (const record of records.filter((r) => r.expect.kind === 'closure')) {
      const { view } = commandOf(record);
      expect(view).toMatchObject({ kind: 'closure', runnable: false });
    }
  });
});

/** The value at a dotted property path such as `data.0.order`. */
function at(value: PhpValue, path: string): PhpValue | undefined {
  let current: PhpValue | undefined = value;
  for (const part of path.split('.')) {
    const v: PhpValue | undefined = current === undefined ? undefined : deref(current);
    if (v instanceof PhpObject) current = v.get(part);
    else if (v instanceof PhpArray) current = v.get(/^\d+$/.test(part) ? Number(part) : part);
    else return undefined;
  }
  return current;
}
