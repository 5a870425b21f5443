/**
 * A million mutated inputs: serialized values (the PHP corpus) and job payloads (real Laravel
 * ones) changed at random, seeded so any failure reproduces. Each call ends, quickly, in a
 * value or in the error type the contract names; nothing else escapes.
 */
import { describe, expect, it } from 'vitest';
import { PayloadError, decodePayload } from '../../src/laravel/index.js';
import { PhpUnserializeError, toJS, unserialize } from '../../src/php/index.js';
import { loadCorpus } from '../helpers/corpus.js';
import { debianPayloads, versionPayloads } from '../helpers/laravel.js';
import { bySize } from '../helpers/tier.js';

const SEED = Number(process.env.LQB_FUZZ_SEED ?? 20261122);
const RUNS = Number(process.env.LQB_FUZZ_RUNS ?? bySize(20_000, 500_000));

/** mulberry32: small, fast and seeded. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTILE = [
  '999999999',
  '2147483647',
  '-1',
  '9223372036854775808',
  'a:1000000:{',
  's:99999999:"',
  'O:1:"X":9999:{',
  'r:0;',
  'R:99;',
  '\\u0000',
  '{',
  '"',
  '}',
  'E:3:"A:B";',
  'C:1:"X":5:{',
];

function mutate(input: Buffer, next: () => number): Buffer {
  const at = Math.floor(next() * (input.length + 1));
  switch (Math.floor(next() * 7)) {
    case 0:
      return input.subarray(0, at);
    case 1: {
      const copy = Buffer.from(input);
      if (at < copy.length) copy[at] = Math.floor(next() * 256);
      return copy;
    }
    case 2:
      return Buffer.concat([input.subarray(0, at), Buffer.from([Math.floor(next() * 256)]), input.subarray(at)]);
    case 3:
      return Buffer.concat([input.subarray(0, at), input.subarray(at + 1 + Math.floor(next() * 8))]);
    case 4: {
      const from = Math.floor(next() * input.length);
      return Buffer.concat([input.subarray(0, at), input.subarray(from, from + Math.floor(next() * 32)), input.subarray(at)]);
    }
    case 5: {
      // A number the input claims replaced by a hostile one.
      const text = input.toString('latin1');
      const digits = [...text.matchAll(/\d+/g)];
      const pick = digits[Math.floor(next() * digits.length)];
      if (!pick) return input;
      return Buffer.from(text.slice(0, pick.index) + HOSTILE[Math.floor(next() * 4)] + text.slice(pick.index + pick[0].length), 'latin1');
    }
    default:
      return Buffer.concat([
        input.subarray(0, at),
        Buffer.from(HOSTILE[Math.floor(next() * HOSTILE.length)]!, 'latin1'),
        input.subarray(at),
      ]);
  }
}

function fuzz(seeds: Buffer[], seed: number, runs: number, call: (input: Buffer) => void, allowed: (error: unknown) => boolean) {
  const next = random(seed);
  let slowest = 0;
  let errors = 0;
  for (let i = 0; i < runs; i++) {
    let input = seeds[Math.floor(next() * seeds.length)]!;
    const rounds = 1 + Math.floor(next() * 3);
    for (let r = 0; r < rounds; r++) input = mutate(input, next);
    const started = performance.now();
    try {
      call(input);
    } catch (error) {
      errors++;
      if (!allowed(error))
        throw new Error(
          `run ${i} (seed ${seed}) escaped with ${String(error)} on input ${JSON.stringify(input.toString('latin1').slice(0, 200))}`,
        );
    }
    slowest = Math.max(slowest, performance.now() - started);
  }
  return { slowest, errors };
}

describe(`fuzzing, seed ${SEED}`, () => {
  it(`unserialize and toJS: ${RUNS} mutated serialized values`, () => {
    const seeds = loadCorpus().map((e) => e.bytes);
    const { slowest, errors } = fuzz(
      seeds,
      SEED,
      RUNS,
      (input) => void toJS(unserialize(input, { maxDepth: 512 })),
      (e) => e instanceof PhpUnserializeError && Number.isInteger(e.offset),
    );
    expect(errors).toBeGreaterThan(RUNS / 4);
    expect(slowest).toBeLessThan(1000);
  });

  it(`decodePayload: ${RUNS} mutated job payloads`, () => {
    const seeds = [...debianPayloads(), ...versionPayloads()].map((r) => Buffer.from(r.payload));
    const { slowest, errors } = fuzz(
      seeds,
      SEED + 1,
      RUNS,
      (input) => {
        const decoded = decodePayload(input.toString('latin1'));
        if (decoded.command !== undefined) toJS(decoded.command);
      },
      (e) => e instanceof PayloadError,
    );
    expect(errors).toBeGreaterThan(RUNS / 4);
    expect(slowest).toBeLessThan(1000);
  });
});
