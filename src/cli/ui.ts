/**
 * `lqb ui [--port=8080] [--host=127.0.0.1] [--queue=a,b]`: the dashboard (src/ui) on a port of its
 * own, over whatever the connection flags resolve (Redis, or the database connection's jobs
 * table), with Horizon's records when they are there. Beyond the loopback only with --token or
 * --basic-auth. Runs until interrupted.
 */
import { DashboardListenError, startDashboard } from '../ui/index.js';
import { isLoopback } from '../ui/access.js';
import { connectionFlags, connectionFrom } from './connection.js';
import { horizonFlags, horizonPrefixFrom } from './horizon.js';
import { UsageError, countFlag, type Command } from './command.js';
import { bookkeepingFlags, databaseConfigOf } from './bookkeeping.js';

export const ui: Command = {
  synopsis: 'lqb ui',
  summary:
    "Serves a dashboard of the queues, PHP's and Node's side by side (Redis, or the database connection's jobs table; Horizon's records when there): counts, waits and the last hour, a page per job, search, failed jobs with retry/forget (one or all matching a filter), batches, who runs what, Node's completed jobs and workers, pause/resume, delayed jobs cancelled. Encrypted commands stay encrypted unless --show-encrypted. Beyond the loopback only with --token or --basic-auth.",
  notes:
    'Give the token once in the address (http://HOST:PORT/?token=TOKEN: it is kept as a cookie) or as Authorization: Bearer TOKEN. Prefer the environment variables to the flags for secrets: flags show in the process list.',
  options: {
    port: { type: 'string', value: 'N', description: 'the port to listen on (0: any free port)', default: '8080' },
    host: { type: 'string', value: 'ADDRESS', description: 'the address to listen on', default: '127.0.0.1' },
    queue: { type: 'string', value: 'a,b', description: 'the queues shown', default: 'every queue found' },
    'read-only': { type: 'boolean', description: 'show, never change: every action is refused' },
    'show-encrypted': {
      type: 'boolean',
      description: "show ShouldBeEncrypted jobs' commands decrypted with the app's key (by default they show as encrypted)",
    },
    token: { type: 'string', value: 'TOKEN', description: 'a token every visitor must give', env: 'LQB_UI_TOKEN' },
    'basic-auth': { type: 'string', value: 'USER:PASS', description: 'basic auth every visitor must give', env: 'LQB_UI_BASIC_AUTH' },
    'retry-after': {
      type: 'string',
      value: 'S',
      description: "the database connection's retry_after: a reservation older than this shows as ready, as Laravel's pop takes it",
      default: '90',
    },
    'batch-db': bookkeepingFlags['batch-db'],
    'batch-table': bookkeepingFlags['batch-table'],
    ...horizonFlags,
    ...connectionFlags,
  },
  noArguments: true,
  async run({ values, out }) {
    const port = countFlag(values.port, 'port', 8080, 0);
    if (port > 65535) throw new UsageError(`--port must be at most 65535, not ${port}`);
    const host = typeof values.host === 'string' && values.host !== '' ? values.host : '127.0.0.1';
    const token = text(values.token) ?? text(process.env.LQB_UI_TOKEN);
    const basicAuth = text(values['basic-auth']) ?? text(process.env.LQB_UI_BASIC_AUTH);
    if (basicAuth !== undefined && !basicAuth.includes(':')) throw new UsageError('--basic-auth must be USER:PASS');
    if (!isLoopback(host) && host !== 'localhost' && token === undefined && basicAuth === undefined)
      throw new UsageError(`--host=${host} is beyond the loopback: give --token or --basic-auth (or LQB_UI_TOKEN / LQB_UI_BASIC_AUTH)`);
    const queues =
      typeof values.queue === 'string'
        ? values.queue
            .split(',')
            .map((q) => q.trim())
            .filter(Boolean)
        : undefined;
    const retryAfter = countFlag(values['retry-after'], 'retry-after', 90, 0);
    const batchDb = text(values['batch-db']);
    if (batchDb) databaseConfigOf('--batch-db', batchDb);
    const batchTable = text(values['batch-table']);
    const started = await startDashboard({
      port,
      host,
      connection: connectionFrom(values),
      horizonPrefix: horizonPrefixFrom(values),
      retryAfter,
      ...(batchDb ? { batchDb } : {}),
      ...(batchTable ? { batchTable } : {}),
      queues,
      readOnly: values['read-only'] === true,
      showEncrypted: values['show-encrypted'] === true,
      token,
      basicAuth,
    }).catch((error: unknown) => {
      // One line naming the flag to change: the port is taken before anything else is opened.
      throw error instanceof DashboardListenError ? new Error(`${error.reason}: choose another with --${error.choose}`) : error;
    });
    out(
      `lqb ui: serving ${started.url} (${queues ? `queues ${queues.join(', ')}` : 'every queue found'}${values['read-only'] ? ', read-only' : ''})`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
      started.server.once('close', () => resolve());
    });
    await started.close();
  },
};

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
