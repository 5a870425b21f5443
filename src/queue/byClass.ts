/**
 * `lqb size --by-class`: a queue's jobs counted per class, read without taking anything. Each
 * driver pages through its jobs (RedisQueue.countByClass, DatabaseQueue.countByClass) and hands
 * every payload here, where its class is read as the reserve with share on reads it: the
 * envelope's `displayName`, from the text, without decoding the payload.
 */

/** How many jobs of one class a queue holds, by state; `taken` when the handlers given take it. */
export interface ClassCount {
  class: string;
  ready: number;
  delayed: number;
  reserved: number;
  /** With handlers given: whether a worker with them (share on) takes this class's jobs. */
  taken?: boolean;
}

/** Where a job is: waiting to be reserved, waiting for its delay, or reserved by a worker. */
export type JobState = 'ready' | 'delayed' | 'reserved';

/**
 * A string field of the envelope as it is written (`"displayName":"App\\Jobs\\X"` gives
 * `App\Jobs\X`), or undefined: the first occurrence of the key, its value read as JSON reads a string.
 */
export function envelopeField(payload: string, field: 'displayName' | 'commandName'): string | undefined {
  const key = `"${field}":"`;
  const open = payload.indexOf(key);
  if (open < 0) return undefined;
  const from = open + key.length - 1;
  for (let at = from + 1; at < payload.length; at++) {
    const c = payload.charCodeAt(at);
    if (c === 0x5c) at++;
    else if (c === 0x22) {
      try {
        return JSON.parse(payload.slice(from, at + 1)) as string;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Counts payloads per class and state; with `takes`, marks the classes a worker with those classes takes. */
export class ClassTally {
  private readonly counts = new Map<string, ClassCount>();

  constructor(private readonly takes?: ReadonlySet<string>) {}

  add(payload: string, state: JobState): void {
    const displayName = envelopeField(payload, 'displayName');
    const name = displayName ?? envelopeField(payload, 'commandName') ?? '(not a job)';
    let count = this.counts.get(name);
    if (!count) {
      count = { class: name, ready: 0, delayed: 0, reserved: 0, ...(this.takes ? { taken: false } : {}) };
      this.counts.set(name, count);
    }
    count[state]++;
    // As the reserve matches: the displayName, else the commandName (a job with a displayName() of its own).
    if (this.takes && !count.taken) count.taken = this.takes.has(name) || this.takes.has(envelopeField(payload, 'commandName') ?? '');
  }

  /** The counts, most jobs first, then by class name. */
  result(): ClassCount[] {
    const total = (c: ClassCount) => c.ready + c.delayed + c.reserved;
    return [...this.counts.values()].sort((a, b) => total(b) - total(a) || (a.class < b.class ? -1 : a.class > b.class ? 1 : 0));
  }
}
