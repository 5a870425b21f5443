/**
 * A job reserved from Laravel's `jobs` table: the row as the reserve left it. As Laravel's
 * DatabaseJob, its id is the row's id, its attempts are the row's `attempts` column (already
 * counted for this attempt), and its raw body is the payload column, which has neither an `id`
 * nor `attempts` of its own.
 */
import { decodePayload, type DecodedPayload, type JsonObject } from '../laravel/index.js';
import { readEnvelope } from '../laravel/payload.js';
import type { ReservedFields, ReservedJob } from '../queue/contract.js';
import { rawFields } from '../queue/fields.js';
import type { DatabaseQueue } from './DatabaseQueue.js';

/** One row of the jobs table, its columns as Laravel names them, read the same on every database. */
export interface JobRecord {
  /** The row's id (a bigint: kept as its decimal text). */
  id: string;
  queue: string;
  payload: string;
  attempts: number;
  /** UNIX seconds, or null when the row is not reserved. */
  reservedAt: number | null;
  availableAt: number;
  createdAt: number;
}

export class DatabaseJob implements ReservedJob {
  #decoded: DecodedPayload | undefined;
  /** The envelope as decodeJson read it; null when it does not read as a JSON object. */
  #envelope: JsonObject | null | undefined;
  #fields: ReservedFields | undefined;

  constructor(
    readonly databaseQueue: DatabaseQueue,
    /** The row as this reserve left it: reserved now, its attempts counted. */
    readonly record: JobRecord,
  ) {}

  get queue(): string {
    return this.record.queue;
  }

  /** The payload column: what a failed-job record stores and what a retry pushes again. */
  get raw(): string {
    return this.record.payload;
  }

  /** The row's id, as Laravel's DatabaseJob::getJobId gives it. */
  get id(): string {
    return this.record.id;
  }

  get uuid(): string | undefined {
    const uuid = (this.#decoded?.envelope ?? this.#envelope ?? this.fields).uuid;
    return typeof uuid === 'string' ? uuid : undefined;
  }

  get payload(): DecodedPayload {
    return (this.#decoded ??= decodePayload(this.raw, this.envelope));
  }

  get envelope(): JsonObject | undefined {
    if (this.#envelope === undefined) this.#envelope = this.#decoded?.envelope ?? readEnvelope(this.raw);
    return this.#envelope ?? undefined;
  }

  /**
   * The envelope's fields, read without decoding the command, with what the row keeps beside
   * it: `id` (the row's) and `attempts` (the column's), so a reader that looks for them in the
   * envelope, as it would on Redis, finds the values Laravel's DatabaseJob reports.
   */
  get fields(): ReservedFields {
    return (this.#fields ??= { ...rawFields(this.raw), id: this.record.id, attempts: this.record.attempts });
  }

  /** The column counts attempts: one on the first reserve, and a release keeps the count. */
  get firstAttempt(): boolean {
    return this.record.attempts <= 1;
  }

  /** This attempt's number: the `attempts` column after the reserve added one, as Laravel's DatabaseJob::attempts. */
  attempts(): number {
    return this.record.attempts;
  }

  /** Laravel's database pop reads every row it reserves: there is no payload it could not. */
  unreadable(): string | undefined {
    return undefined;
  }

  /** Removes the row for good (locked first, as Laravel's deleteReserved does). */
  async delete(): Promise<void> {
    await this.databaseQueue.deleteReserved(this);
  }

  /** Laravel's release: the row deleted and a new one inserted with the same payload and attempts, due after `delay` seconds. */
  async release(delay = 0): Promise<void> {
    await this.databaseQueue.release(this, delay);
  }

  /** Undoes the reservation without spending the attempt (see DatabaseQueue.giveBack). */
  async giveBack(delay = 0): Promise<void> {
    await this.databaseQueue.giveBack(this, delay);
  }
}
