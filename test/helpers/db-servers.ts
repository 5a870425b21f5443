/**
 * Database servers of a test's own, to kill and restart: a PostgreSQL (`postgres` run as the
 * postgres user, as it refuses root) or a MariaDB (`mariadbd`) on a free loopback port, its data
 * in a scratch folder, never the system's service. `kill()` is SIGKILL of the server's main
 * process (the postmaster, mariadbd): what a crash or an OOM kill does. `restart()` starts it
 * again on the same port and data, and resolves once it answers a statement.
 *
 * The waits are generous and poll the condition: the machine may be slow and loaded.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseConfig, openDatabase } from '../../src/database/index.js';
import { freePort } from '../../src/testing/redis-server.js';

export interface PrivateServer {
  engine: 'PostgreSQL' | 'MariaDB';
  port: number;
  /** The URL of its `test` database. */
  url: string;
  /** The main process's id while it runs. */
  readonly pid: number | undefined;
  /** SIGKILL of the main process; resolves once it has exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data; resolves once it answers. */
  restart(): Promise<void>;
  /** Stops it (a fast shutdown) and removes its data. */
  remove(): Promise<void>;
}

/** How long a server may take to answer after a (re)start on a loaded machine: crash recovery included. */
const START_MS = 90_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/** Runs one statement on a fresh connection (the product's own drivers), closed after it. */
async function statement(url: string, sql: string): Promise<void> {
  const db = openDatabase(databaseConfig(url));
  try {
    await db.query(sql);
  } finally {
    await db.close();
  }
}

/** Whether the server answers a statement now. */
const answers = (url: string) =>
  statement(url, 'select 1').then(
    () => true,
    () => false,
  );

/** PostgreSQL's binaries, the newest version installed. */
function postgresBin(name: string): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => join(base, v, 'bin', name)).find((path) => existsSync(path));
  if (!found) throw new Error(`no PostgreSQL ${name} under ${base}/*/bin`);
  return found;
}

function userIds(user: string): { uid: number; gid: number } {
  return {
    uid: Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim()),
  };
}

/** Polls `answers` until it resolves true, or throws naming the server and its last words. */
async function waitUntilAnswers(what: string, answers: () => Promise<boolean>, child: () => ChildProcess | undefined, log: () => string) {
  const deadline = Date.now() + START_MS;
  while (Date.now() < deadline) {
    if (await answers().catch(() => false)) return;
    const running = child();
    if (!running || running.exitCode !== null || running.signalCode !== null) return 'exited';
    await pause(100);
  }
  throw new Error(`${what} did not answer within ${START_MS / 1000} s; its output: ${log().slice(-2000)}`);
}

/**
 * Starts the server's process again and again until it stays up and answers: a postmaster started
 * while the killed one's backends still hold its shared memory refuses to start, and is tried again.
 */
function serverProcess(
  what: string,
  start: () => ChildProcess,
  answers: () => Promise<boolean>,
): Pick<PrivateServer, 'pid' | 'kill' | 'restart'> & { start(): Promise<void>; stop(): Promise<void> } {
  let child: ChildProcess | undefined;
  let output = '';
  const launch = async () => {
    const deadline = Date.now() + START_MS;
    for (;;) {
      output = '';
      child = start();
      child.stdout?.on('data', (chunk) => (output += String(chunk)));
      child.stderr?.on('data', (chunk) => (output += String(chunk)));
      const outcome = await waitUntilAnswers(
        what,
        answers,
        () => child,
        () => output,
      );
      if (outcome !== 'exited') return;
      if (Date.now() > deadline) throw new Error(`${what} kept exiting at start; its output: ${output.slice(-2000)}`);
      await pause(250);
    }
  };
  return {
    get pid() {
      return child?.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    start: launch,
    restart: launch,
    async kill() {
      if (!child) return;
      child.kill('SIGKILL');
      await exited(child);
    },
    async stop() {
      if (!child) return;
      // PostgreSQL's fast shutdown; MariaDB's normal one.
      child.kill(what.startsWith('PostgreSQL') ? 'SIGINT' : 'SIGTERM');
      const stopped = exited(child);
      if ((await Promise.race([stopped.then(() => true), pause(30_000).then(() => false)])) === false) child.kill('SIGKILL');
      await stopped;
    },
  };
}

/** A PostgreSQL of the test's own: initdb in a scratch folder, trust authentication, a `test` database. */
/** What the tests hold of a started server: its URL, its process, and how to kill, restart and remove it (its folder too). */
function privateServer(
  engine: PrivateServer['engine'],
  port: number,
  url: string,
  server: ReturnType<typeof serverProcess>,
  dir: string,
): PrivateServer {
  return {
    engine,
    port,
    url,
    get pid() {
      return server.pid;
    },
    kill: server.kill,
    restart: server.restart,
    async remove() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startPrivatePostgres(): Promise<PrivateServer> {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-pg-'));
  const data = join(dir, 'data');
  const owner = userIds('postgres');
  chownSync(dir, owner.uid, owner.gid);
  execFileSync(postgresBin('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'], { ...owner, stdio: 'pipe' });
  const port = await freePort();
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const server = serverProcess(
    `PostgreSQL on port ${port}`,
    () =>
      spawn(
        postgresBin('postgres'),
        // fsync off: a killed process loses nothing the OS holds, and the machine is not killed.
        ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=100'],
        { ...owner, stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    () => answers(admin),
  );
  await server.start();
  await statement(admin, 'create database test');
  return privateServer('PostgreSQL', port, `postgres://postgres@127.0.0.1:${port}/test`, server, dir);
}

/** A MariaDB of the test's own: mariadb-install-db in a scratch folder, no grant tables, a `test` database. */
export async function startPrivateMariadb(): Promise<PrivateServer> {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-maria-'));
  const data = join(dir, 'data');
  execFileSync(
    'mariadb-install-db',
    ['--no-defaults', `--datadir=${data}`, '--user=root', '--skip-test-db', '--auth-root-authentication-method=normal'],
    {
      stdio: 'pipe',
    },
  );
  const port = await freePort();
  const admin = `mysql://root@127.0.0.1:${port}/`;
  const server = serverProcess(
    `MariaDB on port ${port}`,
    () =>
      spawn(
        'mariadbd',
        [
          '--no-defaults',
          `--datadir=${data}`,
          `--port=${port}`,
          '--bind-address=127.0.0.1',
          `--socket=${join(dir, 'mariadb.sock')}`,
          `--pid-file=${join(dir, 'mariadb.pid')}`,
          '--user=root',
          '--skip-grant-tables',
          '--skip-log-bin',
          '--innodb-buffer-pool-size=32M',
          '--innodb-log-file-size=16M',
          '--innodb-flush-log-at-trx-commit=2',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    () => answers(admin),
  );
  await server.start();
  await statement(admin, 'create database if not exists test');
  return privateServer('MariaDB', port, `mysql://root@127.0.0.1:${port}/test`, server, dir);
}
