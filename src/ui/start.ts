/**
 * The dashboard on a port of its own: what `lqb ui` runs, for a program that wants the same.
 *
 * The port is taken first and the dashboard made after: a port already taken then rejects with
 * nothing opened (no Redis client reconnecting, no sampling timer), so the process that asked
 * can end. Made the other way round, those handles outlived the error and kept it running.
 */
import { createServer, type Server } from 'node:http';
import { createDashboard, type Dashboard, type DashboardOptions } from './dashboard.js';

export interface StartDashboardOptions extends DashboardOptions {
  /** The port to listen on (8080); 0 takes any free port. */
  port?: number;
  /** The address to listen on (127.0.0.1). */
  host?: string;
}

export interface StartedDashboard {
  server: Server;
  /** The address it serves, e.g. `http://127.0.0.1:8080/`. */
  url: string;
  /** The port it listens on (the one taken, when 0 was asked for). */
  port: number;
  dashboard: Dashboard;
  /** Stops listening, ends open connections, and closes what the dashboard opened. */
  close(): Promise<void>;
}

/**
 * The port or the address could not be taken. `reason` says which and why in a few words;
 * `choose` is what to give differently (`port` or `host`).
 */
export class DashboardListenError extends Error {
  override name = 'DashboardListenError';
  constructor(
    readonly reason: string,
    readonly choose: 'port' | 'host',
    readonly code: string | undefined,
    options?: { cause: unknown },
  ) {
    super(`${reason}: choose another ${choose}`, options);
  }
}

/**
 * Listens on `port` and `host`, then serves the dashboard there. Rejects with a
 * DashboardListenError when the port cannot be taken, and with the dashboard's own error when it
 * cannot be made; either way nothing it opened is left open.
 */
export async function startDashboard(options: StartDashboardOptions = {}): Promise<StartedDashboard> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer();
  await listen(server, options.port ?? 8080, host);
  let dashboard: Dashboard;
  try {
    dashboard = createDashboard(options);
  } catch (error) {
    await closeServer(server);
    throw error;
  }
  server.on('request', dashboard.handler);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 8080);
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    port,
    dashboard,
    close: () =>
      (closing ??= (async () => {
        server.closeAllConnections();
        await closeServer(server);
        await dashboard.close();
      })()),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const refused = (error: NodeJS.ErrnoException) => reject(listenError(error, port, host));
    server.once('error', refused);
    server.listen(port, host, () => {
      server.off('error', refused);
      resolve();
    });
  });
}

/** Why listening failed, in the words a person choosing a port or an address needs. */
function listenError(error: NodeJS.ErrnoException, port: number, host: string): DashboardListenError {
  const code = error.code;
  const make = (reason: string, choose: 'port' | 'host') => new DashboardListenError(reason, choose, code, { cause: error });
  switch (code) {
    case 'EADDRINUSE':
      return make(`port ${port} on ${host} is taken (EADDRINUSE)`, 'port');
    case 'EACCES':
      return make(`port ${port} on ${host} needs privileges this process lacks (EACCES)`, 'port');
    case 'EADDRNOTAVAIL':
      return make(`${host} is no address of this machine (EADDRNOTAVAIL)`, 'host');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return make(`${host} cannot be resolved (${code})`, 'host');
    default:
      return make(`cannot listen on port ${port} on ${host}: ${error.message}`, 'port');
  }
}

/** Resolves once the server has stopped listening (at once when it never listened). */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}
