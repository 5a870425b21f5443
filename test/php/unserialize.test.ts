/**
 * Input PHP 8's unserialize() reads though its serialize() never writes it. PHP reads each, and
 * what it writes back is what we must write back; what it refuses, we refuse at the same place.
 */
import { describe, expect, it } from 'vitest';
import { PhpUnserializeError, serialize, toJS, unserialize } from '../../src/php/index.js';
import { phpReserialize } from '../helpers/php.js';

function offsetOf(input: string): number {
  try {
    unserialize(input);
  } catch (error) {
    expect(error, input).toBeInstanceOf(PhpUnserializeError);
    return (error as PhpUnserializeError).offset;
  }
  throw new Error(`no error for ${input}`);
}

describe('escaped strings (S:)', () => {
  const read = [
    'S:3:"a\\62c";',
    'S:3:"a\\6Ac";',
    'S:1:"\\ff";',
    'S:1:"\\5c";',
    'S:0:"";',
    'S:3:"\\e6\\97\\a5";',
    'a:1:{S:1:"\\61";i:1;}',
    'O:8:"stdClass":1:{S:1:"\\61";i:1;}',
    // An escaped string takes a slot number, as any value does.
    'a:2:{i:0;S:1:"x";i:1;R:2;}',
  ];

  it.each(read)('%s is read as PHP reads it, and written back as PHP writes it', (input) => {
    const [expected] = phpReserialize([Buffer.from(input)]);
    expect(expected).toBeInstanceOf(Buffer);
    expect(Buffer.from(serialize(unserialize(input))).toString('latin1')).toBe((expected as Buffer).toString('latin1'));
  });

  it('stands for the bytes it escapes: text when they are UTF-8, bytes when not', () => {
    expect(toJS(unserialize('S:3:"\\e6\\97\\a5";'))).toBe('日');
    expect(toJS(unserialize('S:1:"\\ff";'))).toEqual(new Uint8Array([0xff]));
  });

  it.each([
    ['S:2:"\\ff";', 'a length one byte long'],
    ['S:1:"ab";', 'a length one byte short'],
    ['S:999:"a";', 'a length past the input'],
    ['S:1:"a"', 'no semicolon'],
  ])('%s (%s) is refused at the offset PHP names', (input) => {
    const [phpSays] = phpReserialize([Buffer.from(input)]);
    expect(phpSays).toBeInstanceOf(Error);
    expect(offsetOf(input)).toBe(Number(/offset (\d+)/.exec((phpSays as Error).message)![1]));
  });

  it.each(['S:2:"\\6";', 'S:1:"\\6g";', 'a:1:{i:0;S:1:"\\zz";}'])(
    '%s, a backslash without two hex digits, is refused by both, at the backslash here',
    (input) => {
      const [phpSays] = phpReserialize([Buffer.from(input)]);
      expect(phpSays).toBeInstanceOf(Error);
      expect(offsetOf(input)).toBe(input.indexOf('\\'));
    },
  );
});

describe('floats spelled with more digits than a double holds', () => {
  it.each([
    ['a thousand zeros after the point', 'd:0.' + '0'.repeat(2000) + '1;'],
    ['twelve hundred digits', 'd:' + '1'.repeat(1200) + ';'],
    ['four hundred zeros and an exponent', 'd:1' + '0'.repeat(400) + 'e-400;'],
  ])('%s: read as the number PHP reads, and written back as they came', (_, input) => {
    const [phpWrites] = phpReserialize([Buffer.from(input)]);
    expect(phpWrites).toBeInstanceOf(Buffer);
    const value = unserialize(input);
    expect(toJS(value)).toBe(toJS(unserialize(phpWrites as Buffer)));
    expect(Buffer.from(serialize(value)).toString()).toBe(input);
  });
});

describe('class names', () => {
  it.each(['O:2:"\\A":0:{}', 'O:1:"\\":0:{}', 'C:2:"\\A":0:{}', 'a:1:{i:0;O:2:"\\A":0:{}}', 'O:3:"A-B":0:{}', 'O:0:"":0:{}'])(
    '%s is refused at the offset PHP names',
    (input) => {
      const [phpSays] = phpReserialize([Buffer.from(input)]);
      expect(phpSays).toBeInstanceOf(Error);
      expect(offsetOf(input)).toBe(Number(/offset (\d+)/.exec((phpSays as Error).message)![1]));
    },
  );

  it.each(['O:2:"A\\":0:{}', 'O:4:"A\\\\B":0:{}', 'O:2:"0A":0:{}'])("%s, odd but PHP's, is read and written back", (input) => {
    const [phpWrites] = phpReserialize([Buffer.from(input)]);
    expect(phpWrites).toBeInstanceOf(Buffer);
    expect(Buffer.from(serialize(unserialize(input))).toString()).toBe((phpWrites as Buffer).toString());
  });
});

describe('references that point nowhere, or at what they may not', () => {
  it.each(['r:1;', 'R:1;', 'a:1:{i:0;r:5;}', 'a:1:{i:0;r:1;}', 'a:1:{i:0;R:2;}', 'a:2:{i:0;a:0:{}i:1;r:2;}', 'a:2:{i:0;i:1;i:1;R:0;}'])(
    '%s is refused at the offset PHP names, just past the reference',
    (input) => {
      const [phpSays] = phpReserialize([Buffer.from(input)]);
      expect(phpSays).toBeInstanceOf(Error);
      expect(offsetOf(input)).toBe(Number(/offset (\d+)/.exec((phpSays as Error).message)![1]));
    },
  );
});
