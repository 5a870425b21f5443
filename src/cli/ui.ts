/**
 * `lqb ui [--port=8080] [--host=127.0.0.1] [--queue=a,b]`: the dashboard (src/ui) on a port of its
 * own, over whatever the connection flags resolve. Beyond the loopback only with --token or
 * --basic-auth. Runs until interrupted.
 */
import { createServer } from 'node:http';
import { createDashboard } from '../ui/index.js';
import { isLoopback } from '../ui/access.js';
import { connectionFlags, redisConnectionFrom } from './connection.js';
import { UsageError, countFlag, type Command } from './command.js';

export const ui: Command = {
  synopsis: 'lqb ui',
  summary:
    'Serves a dashboard of the queues: counts, jobs decoded, failed jobs with retry/forget/flush, delayed jobs cancelled, pause/resume. Beyond the loopback only with --token or --basic-auth.',
  notes:
    'Give the token once in the address (http://HOST:PORT/?token=TOKEN: it is kept as a cookie) or as Authorization: Bearer TOKEN. Prefer the environment variables to the flags for secrets: flags show in the process list.',
  options: {
    port: { type: 'string', value: 'N', description: 'the port to listen on (0: any free port)', default: '8080' },
    host: { type: 'string', value: 'ADDRESS', description: 'the address to listen on', default: '127.0.0.1' },
    queue: { type: 'string', value: 'a,b', description: 'the queues shown', default: 'every queue found' },
    'read-only': { type: 'boolean', description: 'show, never change: every action is refused' },
    token: { type: 'string', value: 'TOKEN', description: 'a token every visitor must give', env: 'LQB_UI_TOKEN' },
    'basic-auth': { type: 'string', value: 'USER:PASS', description: 'basic auth every visitor must give', env: 'LQB_UI_BASIC_AUTH' },
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
    const dashboard = createDashboard({
      connection: redisConnectionFrom(values, 'ui'),
      queues,
      readOnly: values['read-only'] === true,
      token,
      basicAuth,
    });
    const server = createServer(dashboard.handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    const address = server.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    const shown = host.includes(':') ? `[${host}]` : host;
    out(
      `lqb ui: serving http://${shown}:${bound}/ (${queues ? `queues ${queues.join(', ')}` : 'every queue found'}${values['read-only'] ? ', read-only' : ''})`,
    );
    await new Promise<void>((resolve) => {
      const stop = () => server.close(() => resolve());
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      server.once('close', () => resolve());
    });
    server.closeAllConnections?.();
    await dashboard.close();
  },
};

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
