/**
 * Where a queue's jobs wait when not under our prefix. A Laravel 12 skeleton made since its
 * "hyphenate prefixes" change gives `{slug}-database-`, an earlier one `{slug}_database_`, and
 * the framework's version cannot tell which; an app may also set REDIS_PREFIX to anything. A
 * worker, `lqb size` or `lqb find` that finds nothing looks once, bounded, under the other
 * spelling and for any `*queues:NAME` list, and says so in one line with the flag. Without it,
 * Node and PHP each wait on a queue the other never fills.
 */
import { isCluster, type RedisClient } from './scripts.js';

/** A list of jobs found under another prefix: its prefix and length. */
export interface QueueElsewhere {
  prefix: string;
  queue: string;
  size: number;
}

/**
 * How far the look for `*queues:NAME` goes: SCAN's COUNT and the number of SCAN calls per queue,
 * so that on a Redis of millions of keys it costs a few thousand keys' walk and ends, found or not.
 */
export interface ElsewhereBounds {
  count: number;
  scans: number;
}

export const ELSEWHERE_BOUNDS: ElsewhereBounds = { count: 250, scans: 20 };

/** At most this many other prefixes are named in the one line. */
const MOST_NAMED = 3;

/** The other default spelling of a Laravel prefix (`app_database_` ↔ `app-database-`), if it is one. */
export function otherDefaultSpelling(prefix: string): string | undefined {
  const underscored = /^(.+)_database_$/.exec(prefix);
  if (underscored) return `${underscored[1]!.replaceAll('_', '-')}-database-`;
  const hyphenated = /^(.+)-database-$/.exec(prefix);
  return hyphenated ? `${hyphenated[1]!.replaceAll('-', '_')}_database_` : undefined;
}

/**
 * The non-empty `queues:NAME` lists under a prefix other than `ownPrefix`: the other default
 * spelling first (one LLEN a queue), then whatever a bounded SCAN MATCH `*queues:NAME` finds, on
 * a client of its own without the key prefix. On a Cluster, none are looked for (a SCAN walks one node).
 */
export async function queuesElsewhere(
  client: RedisClient,
  ownPrefix: string,
  queues: readonly string[],
  bounds: ElsewhereBounds = ELSEWHERE_BOUNDS,
): Promise<QueueElsewhere[]> {
  if (isCluster(client)) return [];
  const raw = client.duplicate({ keyPrefix: '' });
  raw.on('error', () => undefined);
  try {
    const found = new Map<string, QueueElsewhere>();
    const other = otherDefaultSpelling(ownPrefix);
    for (const queue of queues) {
      const keys = [...(other === undefined ? [] : [`${other}queues:${queue}`]), ...(await scanQueueKeys(raw, queue, bounds))];
      for (const key of keys) {
        const prefix = key.slice(0, key.length - `queues:${queue}`.length);
        if (prefix === ownPrefix || found.has(key)) continue;
        const size = await listLength(raw, key);
        if (size > 0) found.set(key, { prefix, queue, size });
      }
    }
    return [...found.values()];
  } finally {
    raw.disconnect();
  }
}

/** The keys a bounded SCAN finds ending in `queues:NAME` (the name's glob characters matched as themselves). */
async function scanQueueKeys(raw: RedisClient, queue: string, bounds: ElsewhereBounds): Promise<string[]> {
  const pattern = `*queues:${queue.replace(/[*?[\]\\]/g, '\\$&')}`;
  const keys: string[] = [];
  let cursor = '0';
  for (let scan = 0; scan < bounds.scans; scan++) {
    const [next, batch] = await raw.scan(cursor, 'MATCH', pattern, 'COUNT', bounds.count);
    keys.push(...batch);
    cursor = next;
    if (cursor === '0') break;
  }
  return keys;
}

/** A key's length when it is a list (a queue's ready jobs), else 0: a string or set of that name is no queue. */
async function listLength(raw: RedisClient, key: string): Promise<number> {
  return (await raw.type(key)) === 'list' ? raw.llen(key) : 0;
}

/** The flag that names a prefix, quoted where it is empty (no prefix) or holds what a shell splits. */
function prefixFlag(prefix: string): string {
  return /^[\w:.@/+-]+$/.test(prefix) ? `--prefix=${prefix}` : `--prefix=${JSON.stringify(prefix)}`;
}

/**
 * Where the jobs wait and the flag that reads them there: `1 job on default waits under "x:"…:
 * if that is the app's, give --prefix=x:`. The caller says first what it found empty.
 */
export function elsewhereHint(found: readonly QueueElsewhere[], ownPrefix: string): string | undefined {
  if (found.length === 0) return undefined;
  const byPrefix = new Map<string, QueueElsewhere[]>();
  for (const f of found) byPrefix.set(f.prefix, [...(byPrefix.get(f.prefix) ?? []), f]);
  const prefixes = [...byPrefix.keys()].slice(0, MOST_NAMED);
  const jobs = (list: QueueElsewhere[]) => list.map((f) => `${f.size} job${f.size === 1 ? '' : 's'} on ${f.queue}`).join(', ');
  const why = (prefix: string) => (prefix === otherDefaultSpelling(ownPrefix) ? ", the other spelling Laravel 12's skeletons give" : '');
  const where = prefixes.map((prefix) => `${jobs(byPrefix.get(prefix)!)} wait under ${JSON.stringify(prefix)}${why(prefix)}`).join('; ');
  const more = byPrefix.size > prefixes.length ? ` (and under ${byPrefix.size - prefixes.length} more prefixes)` : '';
  const flag =
    prefixes.length === 1
      ? `if that is the app's, give ${prefixFlag(prefixes[0]!)}`
      : `if one of them is the app's, give it (${prefixes.map(prefixFlag).join(' or ')})`;
  return `${where}${more}: ${flag} (REDIS_PREFIX, or connect({ prefix }))`;
}

/** The one line said when a worker or `lqb size` finds its queues empty and jobs wait elsewhere. */
export function elsewhereLine(found: readonly QueueElsewhere[], ownPrefix: string): string | undefined {
  const hint = elsewhereHint(found, ownPrefix);
  return hint === undefined ? undefined : `the queues under the prefix ${JSON.stringify(ownPrefix)} are empty, but ${hint}`;
}
