/**
 * Copies of jobs this worker has finished, come back: a delete held up (the queue stalled, the
 * network slow) can reach the queue after the job's reservation ran out, and by then a reserve
 * this very worker sent earlier may have taken the job again (the reservation's expiry put it
 * back, its attempts counted). Such a copy is deleted, not run: the job ran (or failed) once.
 *
 * A queue's replies come in the order it was asked, so a reserve that hands back such a copy was
 * sent before the delete was answered. The worker remembers each finished job for as long as a
 * reserve sent before its delete was answered has not had its jobs looked at: for most jobs
 * that is not at all (no reserve is out when they finish) or a reserve or two. Driver-agnostic:
 * a job is known by its queue and its uuid (its id when it has none), and a copy by the attempt
 * it is on, higher than the finished one's.
 */
import type { Queue, ReservedJob, TakeOnly } from '../queue/contract.js';
import { describeError } from './errors.js';
import { JobInHand } from './JobInHand.js';
import type { WorkerEvent } from './types.js';

/** The most finished jobs remembered at once: past it the oldest go (a bound, never reached in practice). */
const REMEMBERED = 10_000;
/** Reserves in a row that may come back holding only copies before the worker takes the queue as it is. */
const ROUNDS = 3;

/** A finished job, and the last reserve sent before its delete was answered. */
interface Finished {
  inHand: JobInHand;
  sentBefore: number;
}

export class FinishedCopies {
  /** Reserves sent so far: each is numbered by it. */
  private sent = 0;
  /** Reserves whose jobs are not looked at yet, by number (a Set keeps them oldest first). */
  private readonly out = new Set<number>();
  /** Finished jobs a reserve still out may hold a copy of, oldest first. */
  private finishedJobs: Finished[] = [];

  constructor(
    /** The jobs in the worker's hands: one whose delete is on its way is finished already. */
    private readonly inHand: () => Iterable<JobInHand>,
    private readonly say: (event: WorkerEvent, cause?: unknown) => void,
  ) {}

  /**
   * The queue's popMany, less the copies of finished jobs (each deleted, and said in one line).
   * A reserve that held only copies is sent again (a few times at most), so a worker told to
   * stop when the queue is empty does not take copies for an empty queue.
   */
  async reserve(queue: Queue, name: string, count: number, take?: TakeOnly): Promise<ReservedJob[]> {
    const number = ++this.sent;
    this.out.add(number);
    try {
      for (let round = 1; ; round++) {
        const jobs = await queue.popMany(name, count, take);
        const fresh = await this.withoutCopies(jobs);
        if (fresh.length > 0 || fresh.length === jobs.length || round === ROUNDS) return fresh;
      }
    } finally {
      this.out.delete(number);
      this.forgetAnswered();
    }
  }

  /**
   * A job of the worker's has left its hands. One it deleted is remembered when a reserve is
   * out that was sent before this moment: that reserve may have taken it again.
   */
  finished(inHand: JobInHand): void {
    if (!isFinished(inHand) || this.out.size === 0) return;
    if (this.finishedJobs.length >= REMEMBERED) this.finishedJobs.shift();
    this.finishedJobs.push({ inHand, sentBefore: this.sent });
  }

  /** Forgets the finished jobs no reserve still out was sent before (all of them when none is out). */
  private forgetAnswered(): void {
    let oldestOut = Infinity;
    for (const number of this.out) {
      oldestOut = number;
      break;
    }
    let keep = 0;
    while (keep < this.finishedJobs.length && this.finishedJobs[keep]!.sentBefore < oldestOut) keep++;
    if (keep > 0) this.finishedJobs = this.finishedJobs.slice(keep);
  }

  /** The jobs less the copies of finished ones, those deleted. A job on its first attempt is no copy: most are passed at once. */
  private async withoutCopies(jobs: ReservedJob[]): Promise<ReservedJob[]> {
    let fresh: ReservedJob[] | undefined;
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i]!;
      const original = job.firstAttempt ? undefined : this.originalOf(job);
      if (original === undefined) {
        fresh?.push(job);
        continue;
      }
      fresh ??= jobs.slice(0, i);
      await this.deleteCopy(job, original);
    }
    return fresh ?? jobs;
  }

  /** The finished job `job` is a copy of: the same queue and uuid (or id), on an earlier attempt. */
  private originalOf(job: ReservedJob): JobInHand | undefined {
    const identity = identityOf(job);
    if (identity === undefined) return undefined;
    const isOriginal = (inHand: JobInHand) =>
      isFinished(inHand) && inHand.job.queue === job.queue && identityOf(inHand.job) === identity && inHand.job.attempts() < job.attempts();
    for (const inHand of this.inHand()) if (isOriginal(inHand)) return inHand;
    return this.finishedJobs.find((finished) => isOriginal(finished.inHand))?.inHand;
  }

  /**
   * Deletes the copy as its original was deleted (failing, or with the time since it was taken
   * up: with Horizon's records a copy's delete completes the job when the late one could not).
   */
  private async deleteCopy(copy: ReservedJob, original: JobInHand): Promise<void> {
    const said = new JobInHand(copy).event('warning');
    try {
      await copy.delete(original.failedRecorded ? { failing: true } : { runtimeMs: original.elapsed() });
      said.reason = `a copy of a job this worker has ${original.failedRecorded ? 'failed' : 'run'} came back (its reservation ran out before its delete reached the queue): deleted, not run again`;
      this.say(said);
    } catch (error) {
      this.say(
        {
          ...said,
          event: 'error',
          error: `could not delete a copy of a finished job (it comes back after retry_after): ${describeError(error)}`,
        },
        error,
      );
    }
  }
}

/**
 * The job ran or failed, and its delete went out (answered or not): a copy of it must not run.
 * Not one released after all (a delete that failed on a database is handled as an exception).
 */
function isFinished(inHand: JobInHand): boolean {
  return (inHand.deleted || inHand.deleting) && !inHand.released;
}

/** How a job is known across its copies: its uuid, else its id. */
function identityOf(job: ReservedJob): string | undefined {
  return job.uuid ?? (job.id === '' ? undefined : job.id);
}
