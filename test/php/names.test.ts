/**
 * The property names kept per class (src/php/names.ts) must never change what is read or
 * written: objects of a class whose names differ from the kept ones, in any way and at any
 * place, read and write exactly as PHP does, and bad input fails where it failed before.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PhpArray, PhpObject, PhpUnserializeError, fromJS, serialize, toJS, unserialize } from '../../src/php/index.js';
import { phpReserialize } from '../helpers/php.js';

/** `O:…` of class `name` with the given property names, each holding its own index. */
function object(name: string, props: string[]): Buffer {
  return serialize(
    new PhpObject(
      name,
      new PhpArray(
        props,
        props.map((_, i) => i),
      ),
    ),
  );
}

function errorOf(input: Buffer): { offset: number; message: string } | undefined {
  try {
    unserialize(input);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(PhpUnserializeError);
    return { offset: (error as PhpUnserializeError).offset, message: (error as Error).message };
  }
}

describe('kept property names', () => {
  const kept = ['tries', 'connection', '\u0000*\u0000queue', '\u0000App\\Jobs\\Kept\u0000secret', 'chainCatchCallbacks'];
  // Names that differ from the kept ones at their place: longer, shorter, a prefix, one byte
  // off at the start, middle and end, non-ASCII, the same ones in another order.
  const others = [
    ['triesX', 'connection', '\u0000*\u0000queue', '\u0000App\\Jobs\\Kept\u0000secret', 'chainCatchCallbacks'],
    ['trie', 'connectio', '\u0000*\u0000queu', '\u0000App\\Jobs\\Kept\u0000secre', 'chainCatchCallback'],
    ['Tries', 'connectioN', '\u0000*\u0001queue', '\u0000App\\Jobs\\Kept\u0000Secret', 'chainCatchCallbackz'],
    ['tríes', 'connection', 'ß', '\u0000App\\Jobs\\Kept\u0000secret', '😀'],
    ['connection', 'tries', 'chainCatchCallbacks', '\u0000*\u0000queue', '\u0000App\\Jobs\\Kept\u0000secret'],
    ['tries', 'connection'],
    [...kept, 'extra', 'more'],
  ];

  it('objects whose names differ from the kept ones read and write as PHP does', () => {
    const inputs = [object('App\\Jobs\\Kept', kept)];
    for (const names of others) inputs.push(object('App\\Jobs\\Kept', names), object('App\\Jobs\\Kept', kept));
    // And nested: a kept class inside an array inside another kept class.
    inputs.push(
      serialize(new PhpObject('App\\Jobs\\Kept', new PhpArray(['tries', 'connection'], [PhpArray.list([unserialize(inputs[1]!)]), null]))),
    );
    const theirs = phpReserialize(inputs);
    inputs.forEach((bytes, i) => {
      expect(theirs[i]).toBeInstanceOf(Buffer);
      expect(Buffer.compare(theirs[i] as Buffer, bytes)).toBe(0);
      const value = unserialize(bytes);
      expect(Buffer.compare(serialize(value), bytes)).toBe(0);
    });
    // What was read is what was written, names and all.
    others.forEach((names, k) => expect((unserialize(inputs[1 + 2 * k]!) as PhpObject).props.keys).toEqual(names));
  });

  it('any mix of names over a few classes comes back as it went in', () => {
    const name = fc.constantFrom(
      'a',
      'ab',
      'abc',
      'abcd',
      'abcde',
      'job',
      'jobs',
      'queue',
      'queues',
      '\u0000*\u0000a',
      'é',
      'x'.repeat(300),
    );
    const value = fc.tuple(fc.constantFrom('K1', 'K2', 'App\\K3'), fc.uniqueArray(name, { maxLength: 6 }));
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 8 }), (objects) => {
        for (const [className, names] of objects) {
          const bytes = object(className, names);
          const read = unserialize(bytes) as PhpObject;
          expect(read.props.keys).toEqual(names);
          expect(Buffer.compare(serialize(read), bytes)).toBe(0);
          expect(unserialize(bytes.toString('utf8'))).toEqual(read);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('bad input fails at the same place and with the same words as for a class never seen', () => {
    // Each class name below has the same length, so offsets line up; `App\Kept0` has its names
    // kept, and every `App\NewNN`-like name is used once, so nothing is kept for it.
    const names = ['tries', 'connection', '\u0000*\u0000queue', 'chainCatchCallbacks'];
    unserialize(object('App\\Kept0', names));
    const good = object('App\\Kept0', names);
    let fresh = 0;
    const freshName = () => `App\\N${String(fresh++).padStart(4, '0')}`;
    // Cut or change every byte after the object's head `O:9:"App\Kept0":4:{`, where the names are.
    const head = good.indexOf('{') + 1;
    const variants: ((bytes: Buffer) => Buffer)[] = [];
    for (let at = head; at <= good.length; at++) variants.push((bytes) => bytes.subarray(0, at));
    for (let at = head; at < good.length; at++) {
      for (const byte of [0x00, 0x22, 0x3a, 0x3b, 0x61, 0xff]) {
        variants.push((bytes) => {
          const copy = Buffer.from(bytes);
          copy[at] = byte;
          return copy;
        });
      }
    }
    const differ = variants
      .map((change) => ({ kept: errorOf(change(good)), fresh: errorOf(change(object(freshName(), names))) }))
      .filter(({ kept, fresh }) => JSON.stringify(kept) !== JSON.stringify(fresh));
    expect(differ.slice(0, 3)).toEqual([]);
    expect(variants.filter((change) => errorOf(change(good)) !== undefined).length).toBeGreaterThan(variants.length / 2);
  });

  it('an object head a byte off the last class read is read as if that class were never seen', () => {
    const good = object('App\\Kept0', ['a']);
    const other = object('App\\Other', ['a']);
    const head = good.indexOf('{') + 1;
    const variants: Buffer[] = [];
    for (let at = 0; at < head; at++) {
      variants.push(good.subarray(0, at));
      for (const byte of [0x00, 0x22, 0x3a, 0x31, 0x4b, 0x80]) {
        const copy = Buffer.from(good);
        copy[at] = byte;
        variants.push(copy);
      }
    }
    const outcome = (bytes: Buffer) => {
      try {
        return (unserialize(bytes) as PhpObject).className;
      } catch (error) {
        return `${(error as PhpUnserializeError).offset}: ${(error as Error).message}`;
      }
    };
    const differ = variants.filter((bytes) => {
      unserialize(good);
      const afterKept = outcome(bytes);
      unserialize(other);
      return outcome(bytes) !== afterKept;
    });
    expect(differ.map((bytes) => bytes.toString('latin1'))).toEqual([]);
    expect(variants.filter((bytes) => outcome(bytes).startsWith('App')).length).toBeGreaterThan(0);
  });

  it('stays bounded: many classes, many names, long names', () => {
    for (let k = 0; k < 600; k++) {
      const bytes = object(`Many\\C${k}`, ['a', `b${k}`]);
      expect(Buffer.compare(serialize(unserialize(bytes)), bytes)).toBe(0);
    }
    // Class names past the bound, and not ASCII, are read and written the usual way.
    for (const className of ['Long\\' + 'C'.repeat(300), 'App\\Jobs\\Ünïcödé', 'App\\Jobs\\Ünïcödé']) {
      const bytes = object(className, ['a', 'b']);
      expect(Buffer.compare(serialize(unserialize(bytes)), bytes)).toBe(0);
      expect(phpReserialize([bytes])[0]).toEqual(bytes);
    }
    const wide = Array.from({ length: 300 }, (_, i) => `p${i}`);
    const long = ['y'.repeat(1000), 'short'];
    for (const names of [wide, long, wide, long]) {
      const bytes = object('Wide\\Or\\Long', names);
      expect((unserialize(bytes) as PhpObject).props.keys).toEqual(names);
      expect(Buffer.compare(serialize(unserialize(bytes)), bytes)).toBe(0);
    }
  });

  it('values built in JavaScript are written with the kept names as PHP writes them', () => {
    const hints = { class: 'App\\Jobs\\Built', visibility: { secret: 'private', queue: 'protected' } } as const;
    const built = [
      fromJS({ tries: 3, queue: 'emails', secret: 'x' }, hints),
      fromJS({ tries: 3, queue: 'emails', secret: 'x' }, hints),
      fromJS({ queue: 'emails', tries: 3, secret: 'x' }, hints),
      fromJS({ tries: 3, other: 1 }, hints),
    ];
    const ours = built.map((value) => serialize(value));
    const theirs = phpReserialize(ours);
    ours.forEach((bytes, i) => expect(Buffer.compare(theirs[i] as Buffer, bytes)).toBe(0));
    expect(toJS(unserialize(ours[2]!))).toEqual(toJS(built[2]!));
  });
});
