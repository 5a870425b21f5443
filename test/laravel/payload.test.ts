/**
 * The envelope codec on real payloads of Laravel 5.8 to 12 (fixtures/laravel/versions-5.8-to-12.jsonl): byte-exact
 * re-encoding, the reserved (cjson) form, and typed views that say what PHP put in.
 */
import { describe, expect, it } from 'vitest';
import { decodePayload, encodePayload, asModelIdentifier, type ListenerView, PayloadError } from '../../src/index.js';
import { toJS } from '../../src/php/index.js';
import { asJson, modelIdentifiers, versionPayloads } from '../helpers/laravel.js';

const records = versionPayloads();

describe('payloads of Laravel 5.8 to 12', () => {
  it('covers every version the fixture promises', () => {
    expect(new Set(records.map((r) => r.laravel.split('.')[0]))).toEqual(new Set(['5', '6', '7', '8', '9', '10', '11', '12']));
  });

  it.each(records.map((r, i) => [`${r.laravel} #${i}`, r] as const))(
    '%s re-encodes byte for byte, and its reserved form decodes',
    (_, record) => {
      const decoded = decodePayload(record.payload);
      expect(encodePayload(decoded)).toBe(record.payload);
      const reserved = decodePayload(record.reserved);
      expect(reserved.name).toBe(decoded.name);
      expect(reserved.envelope.attempts).toBe(Number(decoded.envelope.attempts) + 1);
      expect(asJson(reserved.view.kind === 'encrypted' ? null : toJS(reserved.command!))).toEqual(asJson(toJS(decoded.command!)));
    },
  );

  it.each(records.map((r, i) => [`${r.laravel} #${i}`, r] as const))('%s has the typed view PHP describes', (_, record) => {
    const { envelope, view, command, name } = decodePayload(record.payload);
    const expected = record.expect;
    expect(name).toBe(expected.commandName);
    expect(envelope.displayName).toBe(expected.displayName);
    if ('maxTries' in expected) expect(envelope.maxTries).toBe(expected.maxTries);
    if ('timeout' in expected) expect(envelope.timeout).toBe(expected.timeout);
    if (expected.props) {
      const props = toJS(command!) as Record<string, unknown>;
      for (const [key, value] of Object.entries(expected.props)) expect(asJson(props[key] ?? null), key).toEqual(value);
    }
    if (expected.listener) {
      expect(view.kind).toBe('listener');
      const listener = view as ListenerView;
      expect(`${listener.listener}@${listener.method}`).toBe(expected.listener);
      expect(asJson(toJS(listener.arguments[0]!))).toMatchObject(expected.event);
    }
    if (expected.model) {
      const [model] = modelIdentifiers(command!);
      expect(asModelIdentifier(model!)).toMatchObject({ class: expected.model.class, id: expected.model.id, isCollection: false });
    }
  });
});

describe('payloads that are not envelopes', () => {
  it.each([
    ['not JSON', '{"job":', ''],
    ['not an object', '[1]', ''],
    ['no job', '{"data":{}}', '/job'],
    [
      'a command that is not a string',
      '{"job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","data":{"commandName":"X","command":5}}',
      '/data/command',
    ],
    [
      'a command that is not PHP',
      '{"job":"Illuminate\\\\Queue\\\\CallQueuedHandler@call","data":{"commandName":"X","command":"O:1:\\"X\\":1:{"}}',
      '/data/command',
    ],
  ])('%s is a PayloadError naming the field', (_, raw, path) => {
    try {
      decodePayload(raw);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(PayloadError);
      expect((error as PayloadError).path).toBe(path);
    }
  });
});
