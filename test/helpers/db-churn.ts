/**
 * A process that uses a database (plain statements and transactions, 8 at a time) while its
 * server ends those connections at random moments, as a restarting server does. Run as
 *   node --import tsx test/helpers/db-churn.ts URL ROUNDS
 * it prints `survived OK FAILED` and exits 0, or dies of whatever error went unheard.
 */
import { databaseConfig, openDatabase } from '../../src/database/index.js';

const [url, rounds = '200'] = process.argv.slice(2);
const NAME = 'lqb_churn';
const config = databaseConfig(url!);
const where = config.dialect === 'pgsql' ? `${url}${url!.includes('?') ? '&' : '?'}application_name=${NAME}` : url!;
const db = openDatabase(databaseConfig(where));
const admin = openDatabase(config);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Ends every connection of `db` (not the admin's own): what a server going down does to them. */
async function endTheirConnections(): Promise<void> {
  if (config.dialect === 'pgsql') {
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = '${NAME}'`);
    return;
  }
  const { rows } = await admin.query<{ id: number }>(
    "select id from information_schema.processlist where info like 'select %lqb churn%' or (command = 'Sleep' and id <> connection_id())",
  );
  for (const { id } of rows) await admin.query(`kill ${Number(id)}`).catch(() => undefined);
}

let stop = false;
let ok = 0;
let failed = 0;
async function use(n: number): Promise<void> {
  while (!stop) {
    try {
      if (n % 2) await db.query('select 1 /* lqb churn */');
      else
        await db.transaction(async (tx) => {
          await tx.query('select 1 /* lqb churn */');
          await pause(2);
          await tx.query('select 2 /* lqb churn */');
        });
      ok++;
    } catch {
      failed++;
      await pause(5);
    }
  }
}

const users = Array.from({ length: 8 }, (_, n) => use(n));
for (let round = 0; round < Number(rounds); round++) {
  await endTheirConnections();
  await pause(15);
}
stop = true;
await Promise.all(users);
console.log(`survived ${ok} ${failed}`);
await db.close();
await admin.close();
