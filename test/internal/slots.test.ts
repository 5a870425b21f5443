import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/internal/slots.js';

const job = (name: string) => ({ name });

describe('Slots: the jobs in hand, each in a numbered place', () => {
  it('counts what it holds and gives back the items in place order', () => {
    const slots = new Slots<{ name: string }>();
    const a = job('a');
    const b = job('b');
    const c = job('c');
    const at = [a, b, c].map((item) => slots.add(item));
    expect(at, 'the places given').toEqual([0, 1, 2]);
    slots.remove(at[1]!, b);
    expect(slots.size, 'size after one left').toBe(2);
    expect(
      slots.values().map((item) => item.name),
      'the items left',
    ).toEqual(['a', 'c']);
  });

  it('gives an emptied place to the next item, and a stale remove leaves the new holder alone', () => {
    const slots = new Slots<{ name: string }>();
    const first = job('first');
    const at = slots.add(first);
    slots.remove(at, first);
    const next = job('next');
    expect(slots.add(next), 'the emptied place is reused').toBe(at);
    // The first item's remove comes again (a job let go twice): the place is next's now.
    slots.remove(at, first);
    expect(
      slots.values().map((item) => item.name),
      'what the place holds after a stale remove',
    ).toEqual(['next']);
    expect(slots.size, 'size after a stale remove').toBe(1);
    slots.remove(-1, next);
    expect(slots.size, 'size after removing with no place (-1)').toBe(1);
  });

  it('finds the first item a test accepts, and nothing once it has left', () => {
    const slots = new Slots<{ name: string }>();
    const items = ['a', 'b', 'b'].map(job);
    const at = items.map((item) => slots.add(item));
    expect(
      slots.find((item) => item.name === 'b'),
      'the first b',
    ).toBe(items[1]);
    slots.remove(at[1]!, items[1]!);
    expect(
      slots.find((item) => item.name === 'b'),
      'the second b, once the first left',
    ).toBe(items[2]);
    slots.remove(at[2]!, items[2]!);
    expect(
      slots.find((item) => item.name === 'b'),
      'a b after both left',
    ).toBeUndefined();
  });

  it('reads a copy: items removed while the copy is read are still in it', () => {
    const slots = new Slots<{ name: string }>();
    const items = ['a', 'b', 'c'].map(job);
    const at = items.map((item) => slots.add(item));
    const seen: string[] = [];
    for (const item of slots.values()) {
      seen.push(item.name);
      slots.remove(at[items.indexOf(item)]!, item);
    }
    expect(seen, 'the items read while each was removed').toEqual(['a', 'b', 'c']);
    expect(slots.size, 'size once all were removed').toBe(0);
  });
});
