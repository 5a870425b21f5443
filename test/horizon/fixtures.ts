/**
 * The Horizon fixtures (fixtures/horizon/events.jsonl, made by Horizon 5.22.1 on Laravel 8.83):
 * reading them, dumping the same kind of state from Redis, and comparing the two with the
 * times and Node's own values (runtime, exception text) masked as the fixtures' README says.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { root } from '../helpers/php.js';

export interface FixtureKey {
  key: string;
  type: 'hash' | 'zset' | 'list' | 'set' | 'string';
  value: unknown;
  ttl: number;
  times?: string[];
  volatile?: string[];
}

export interface FixtureLine {
  step: number;
  action: string;
  event: string;
  jobName: string | null;
  jobId: string | null;
  queue: string | null;
  payload?: string;
  times?: string[];
  before: FixtureKey[];
  after: FixtureKey[];
}

export const FIXTURE_APP_PREFIX = 'laravel_database_';
export const FIXTURE_HORIZON_PREFIX = 'laravel_horizon:';

export function readHorizonFixtures(): FixtureLine[] {
  const text = readFileSync(join(root, 'fixtures/horizon/events.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as FixtureLine);
}

/**
 * Every key under the two prefixes, in the fixtures' form, named as the fixtures name them
 * (our prefixes replaced by theirs, in set members too: measured_jobs holds full key names).
 */
export async function dumpState(
  raw: Redis,
  appPrefix: string,
  horizonPrefix: string,
  /** 'at': when each key expires (UNIX seconds), so two states read a second apart compare alike. */
  expiry: 'left' | 'at' = 'left',
): Promise<FixtureKey[]> {
  const rename = (name: string) =>
    name.startsWith(appPrefix)
      ? FIXTURE_APP_PREFIX + name.slice(appPrefix.length)
      : name.startsWith(horizonPrefix)
        ? FIXTURE_HORIZON_PREFIX + name.slice(horizonPrefix.length)
        : name;
  const keys = [...(await raw.keys(`${appPrefix}*`)), ...(await raw.keys(`${horizonPrefix}*`))];
  const out: FixtureKey[] = [];
  for (const key of keys) {
    const type = (await raw.type(key)) as FixtureKey['type'];
    let value: unknown;
    if (type === 'hash')
      value = Object.fromEntries(Object.entries(await raw.hgetall(key)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    else if (type === 'list') value = await raw.lrange(key, 0, -1);
    else if (type === 'set') value = (await raw.smembers(key)).map(rename).sort();
    else if (type === 'zset') {
      const flat = await raw.zrange(key, 0, -1, 'WITHSCORES');
      const pairs: [string, number][] = [];
      for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, Number(flat[i + 1])]);
      value = pairs;
    } else value = await raw.get(key);
    const ttl = expiry === 'at' ? Math.max(-2, Number(await raw.call('EXPIRETIME', key))) : await raw.ttl(key);
    out.push({ key: rename(key), type, value, ttl });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The window our own times must fall in (UNIX seconds): from the test's start to its end, plus the longest delay it uses. */
export interface TimeWindow {
  from: number;
  to: number;
}

/**
 * A value with the fixture's masks applied: each time becomes "TIME" or "-TIME" (after checking,
 * on our side, that it is a time inside the window), each volatile value "VOLATILE". `where`
 * names the step and key for a failure.
 */
export function masked(
  value: unknown,
  pointers: { times?: string[]; volatile?: string[] },
  window: TimeWindow | undefined,
  where: string,
): unknown {
  let copy = structuredClone(value);
  for (const pointer of pointers.times ?? []) copy = applyPointer(copy, pointer, (v, at) => timeToken(v, window, `${where} ${at}`));
  for (const pointer of pointers.volatile ?? []) copy = applyPointer(copy, pointer, (v, at) => volatileToken(v, window, `${where} ${at}`));
  return copy;
}

type Masker = (value: unknown, at: string) => string;

function applyPointer(value: unknown, pointer: string, mask: Masker): unknown {
  const [outer, inner] = pointer.split('#') as [string, string | undefined];
  const path = outer.split('/').slice(1);
  return walk(value, path, (target, at) => (inner === undefined ? mask(target, at) : maskInside(target, inner, mask, at)), '');
}

function walk(value: unknown, path: string[], atEnd: Masker, at: string): unknown {
  if (path.length === 0) return atEnd(value, at);
  const [head, ...rest] = path as [string, ...string[]];
  if (head === '*') {
    if (!Array.isArray(value)) throw new Error(`${at}: * expects a list, found ${JSON.stringify(value)}`);
    return value.map((item, i) => walk(item, rest, atEnd, `${at}/${i}`));
  }
  if (value === null || typeof value !== 'object') throw new Error(`${at}/${head}: nothing there`);
  const container = value as Record<string, unknown>;
  if (!(head in container)) throw new Error(`${at}/${head}: no such field`);
  const copy = (Array.isArray(value) ? [...value] : { ...container }) as Record<string, unknown>;
  copy[head] = walk(container[head], rest, atEnd, `${at}/${head}`);
  return copy;
}

/** Masks a member of JSON text in place, in its raw bytes: `"name":value` wherever it occurs unescaped. */
function maskInside(text: unknown, inner: string, mask: Masker, at: string): string {
  if (typeof text !== 'string') throw new Error(`${at}: expected JSON text, found ${JSON.stringify(text)}`);
  const name = inner.split('/').pop()!;
  const member = new RegExp(`"${name}":("(?:[^"\\\\]|\\\\.)*"|-?[0-9][0-9.eE+-]*)`, 'g');
  let found = 0;
  const out = text.replace(member, (_, raw: string) => {
    found++;
    return `"${name}":${mask(JSON.parse(raw), `${at}#${inner}`)}`;
  });
  if (found === 0) throw new Error(`${at}#${inner}: no "${name}" member in ${text.slice(0, 120)}`);
  return out;
}

function timeToken(value: unknown, window: TimeWindow | undefined, at: string): string {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (Number.isNaN(number)) throw new Error(`${at}: expected a time, found ${JSON.stringify(value)}`);
  if (window && (Math.abs(number) < window.from - 1 || Math.abs(number) > window.to + 1))
    throw new Error(`${at}: ${number} is not a time of this test (${window.from} to ${window.to})`);
  return number < 0 ? '-TIME' : 'TIME';
}

function volatileToken(value: unknown, window: TimeWindow | undefined, at: string): string {
  if (window && (typeof value !== 'string' || value === '')) throw new Error(`${at}: expected a value, found ${JSON.stringify(value)}`);
  return 'VOLATILE';
}

/**
 * The keys with their lists' times moved to now: Horizon scores its lists by minus the time a
 * job got there, so the fixtures' lists, left as they were made, age past any trim setting;
 * moved, the latest of them is now and the others keep their distance from it.
 */
export function movedToNow(keys: FixtureKey[], now = Date.now() / 1000): FixtureKey[] {
  const times = keys.flatMap((k) => (k.type === 'zset' ? (k.value as [string, number][]).map(([, score]) => -score) : []));
  const shift = now - Math.max(...times.filter((time) => time > 0));
  return keys.map((k) =>
    k.type === 'zset'
      ? { ...k, value: (k.value as [string, number][]).map(([member, score]) => [member, score < 0 ? score - shift : score]) }
      : k,
  );
}

/** Writes fixture keys into Redis, renamed under our prefixes, with their expiries. */
export async function loadState(raw: Redis, keys: FixtureKey[], appPrefix: string, horizonPrefix: string): Promise<void> {
  const rename = (name: string) =>
    name.startsWith(FIXTURE_APP_PREFIX)
      ? appPrefix + name.slice(FIXTURE_APP_PREFIX.length)
      : name.startsWith(FIXTURE_HORIZON_PREFIX)
        ? horizonPrefix + name.slice(FIXTURE_HORIZON_PREFIX.length)
        : name;
  for (const { key, type, value, ttl } of keys) {
    const name = rename(key);
    if (type === 'hash') await raw.hset(name, value as Record<string, string>);
    else if (type === 'list') await raw.rpush(name, ...(value as string[]));
    else if (type === 'set') await raw.sadd(name, ...(value as string[]).map(rename));
    else if (type === 'zset') for (const [member, score] of value as [string, number][]) await raw.zadd(name, score, member);
    else await raw.set(name, value as string);
    if (ttl > 0) await raw.expire(name, ttl);
  }
}
