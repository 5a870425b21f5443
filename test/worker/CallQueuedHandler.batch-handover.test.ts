/**
 * What real Laravel 12.67 and 13.26 did with the stand-in a Node worker pushes to hand a batch's
 * finish to PHP (fixtures/laravel/batch-handover-12-13.jsonl, made by their own workers): the
 * batch finished, then and finally ran once each. Here: the stand-in this code builds today is,
 * byte for byte, the one they ran (its uuid, id, clock, object hash and signature taken from the
 * record, since the run's key is not kept), and the batch row their apps wrote shows the
 * repository a signed callback to check a key against.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPayload } from '../../src/laravel/index.js';
import { batchedNoopCommand } from '../../src/laravel/closure.js';
import { openDatabase } from '../../src/database/index.js';
import { DatabaseBatchRepository } from '../../src/worker/BatchRepository.js';
import { root } from '../helpers/php.js';

interface Handover {
  laravel: string;
  standIn: string;
  batchBefore: Record<string, unknown>;
  batchAfter: Record<string, unknown>;
  callbacks: { callback: string }[];
  failedJobs: unknown[];
}

const records = readFileSync(join(root, 'fixtures/laravel/batch-handover-12-13.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Handover);
const dir = mkdtempSync(join(tmpdir(), 'lqb-handover-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(records.map((r) => [r.laravel, r] as const))('Laravel %s', (laravel, record) => {
  const envelope = JSON.parse(record.standIn) as Record<string, any>;
  const batchId = String(record.batchBefore.id);

  it('ran the stand-in: the batch finished with nothing failed, then and finally once each', () => {
    expect(
      [record.batchAfter.pending_jobs, record.batchAfter.failed_jobs, record.batchAfter.finished_at !== null],
      `${laravel}'s batch row after its worker ran`,
    ).toEqual([0, 0, true]);
    expect(
      record.callbacks.map((c) => c.callback),
      `${laravel}'s callbacks`,
    ).toEqual(['then', 'finally']);
    expect(record.failedJobs, `${laravel}'s failed_jobs`).toEqual([]);
  });

  it('is given, byte for byte, the stand-in this code builds for that batch', () => {
    const signed = /s:4:"self";s:32:"([0-9a-f]{32})";}";s:4:"hash";s:44:"([^"]{44})"/.exec(envelope.data.command as string);
    expect(signed, `the closure's object hash and signature in ${laravel}'s record`).not.toBeNull();
    const built = buildPayload(batchedNoopCommand(batchId, { signClosure: () => signed![2]! }, { self: signed![1]! }), {
      profile: laravel.startsWith('13') ? '13' : '12',
      displayName: `Closure (laravel-queue-bridge: finishes batch ${batchId})`,
      batchId,
      driver: 'redis',
      uuid: envelope.uuid,
      id: envelope.id,
      createdAt: envelope.createdAt,
    });
    expect(built.raw, `the stand-in for ${laravel}`).toBe(record.standIn);
  });

  it('wrote its callbacks signed, which the repository finds to check a key against', async () => {
    const file = join(dir, `batches-${laravel}.sqlite`);
    const db = openDatabase({ dialect: 'sqlite', filename: file });
    const row = record.batchBefore;
    const columns = Object.keys(row);
    await db.query(`create table job_batches (${columns.map((c) => `"${c}"`).join(', ')})`);
    await db.query(
      `insert into job_batches values (${columns.map(() => '?').join(', ')})`,
      columns.map((c) => row[c]),
    );
    await db.close();
    const batches = new DatabaseBatchRepository({ dialect: 'sqlite', filename: file });
    const found = await batches.find(batchId);
    const signed = found?.options.signedCallback;
    expect([found?.options.then, found?.options.finally], `${laravel}'s callbacks as the repository counts them`).toEqual([1, 1]);
    expect(signed?.serializable, `${laravel}'s signed then callback`).toMatch(
      /^O:46:"Laravel\\SerializableClosure\\Serializers\\Native":5:/,
    );
    expect(signed?.hash, `${laravel}'s signature`).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });
});
