/**
 * A LaravelQueue when Redis misbehaves after connect(): a stalled server bounds dispatch and
 * size by the command timeout; a Redis that goes away reaches the worker's onError and logger
 * as Error objects naming the host; close() closes what it opened even then.
 */
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type LaravelQueue } from '../../src/connect/index.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';

let queue: LaravelQueue | undefined;
let own: OwnRedis | undefined;
afterEach(async () => {
  await queue?.close();
  queue = undefined;
  own?.stop();
  own = undefined;
});

/** A server that answers the client's ready check and then nothing: a Redis that stalls. */
async function stalledServer(): Promise<{ port: number; close(): void }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    let pending = '';
    socket.on('data', (chunk) => {
      pending += chunk.toString('latin1');
      // Each whole RESP command: its name decides the answer; past the handshake, none comes.
      for (;;) {
        const command = /^\*(\d+)\r\n\$(\d+)\r\n([^\r]*)\r\n/.exec(pending);
        if (!command) break;
        let rest = pending.slice(command[0].length);
        let whole = true;
        for (let i = 1; i < Number(command[1]); i++) {
          const arg = /^\$(\d+)\r\n/.exec(rest);
          if (!arg || rest.length < arg[0].length + Number(arg[1]) + 2) {
            whole = false;
            break;
          }
          rest = rest.slice(arg[0].length + Number(arg[1]) + 2);
        }
        if (!whole) break;
        pending = rest;
        const name = command[3]!.toLowerCase();
        if (name === 'info') {
          const body = '# Server\r\nredis_version:7.0.0\r\nloading:0\r\n';
          socket.write(`$${Buffer.byteLength(body)}\r\n${body}\r\n`);
        } else if (name === 'select' || name === 'client') socket.write('+OK\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/**
 * A bound that tells "ended" from "waited on a Redis that never answers" (which would hang until
 * the test's own timeout), generous enough for a busy machine: these are not speed claims.
 */
const ENDS_WITHIN_MS = 30_000;

describe('a LaravelQueue whose Redis misbehaves', () => {
  it('dispatch and size end at the command timeout when Redis stops answering, naming where', async () => {
    const server = await stalledServer();
    try {
      queue = await connect({ redis: `redis://127.0.0.1:${server.port}/0`, connectTimeout: 1000, commandTimeout: 300 });
      let started = Date.now();
      const error = await queue.dispatch('App\\Jobs\\Anything', { n: 1 }).catch((e: unknown) => e);
      expect(Date.now() - started, 'dispatch waited on a Redis that never answers').toBeLessThan(ENDS_WITHIN_MS);
      // A stalled Redis may still run the push once it wakes: the outcome is unknown, and said so.
      expect((error as Error).message, 'the dispatch error does not say the push is unconfirmed, nor where').toMatch(
        new RegExp(
          `the job may or may not have been pushed: Redis at redis://127\\.0\\.0\\.1:${server.port}/0 did not confirm it \\(Command timed out\\)`,
        ),
      );
      started = Date.now();
      await expect(queue.size('default'), 'size() did not reject').rejects.toThrow();
      expect(Date.now() - started, 'size waited on a Redis that never answers').toBeLessThan(ENDS_WITHIN_MS);
    } finally {
      server.close();
    }
  });

  it('a worker hears a Redis that goes away through onError and its logger, as Errors naming the host', async () => {
    own = await startOwnRedis([]);
    queue = await connect({ redis: `redis://127.0.0.1:${own.port}/0` });
    const troubles: Error[] = [];
    const logged: { level: string; fields: Record<string, unknown>; message?: string }[] = [];
    const at = (level: string) => (fields: object, message?: string) =>
      void logged.push({ level, fields: fields as Record<string, unknown>, message });
    const worker = queue.worker(
      {},
      {
        sleep: 0.05,
        memory: 0,
        failer: false,
        onError: (error) => void troubles.push(error),
        logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
      },
    );
    const running = worker.run();
    // The worker is polling before Redis goes (a busy machine may take a while to start it).
    for (const deadline = Date.now() + 60_000; worker.health().lastPoll === null && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 50));
    expect(worker.health().lastPoll, 'the worker never polled the Redis that answered').not.toBeNull();
    own.stop();
    own = undefined;
    const deadline = Date.now() + 60_000;
    while (troubles.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(troubles.length, 'onError heard nothing of a Redis that went away').toBeGreaterThan(0);
    expect(troubles[0], 'onError was not given an Error').toBeInstanceOf(Error);
    expect(troubles.map((e) => e.message).join('\n'), 'no error names the host').toMatch(/127\.0\.0\.1/);
    const started = Date.now();
    expect((await worker.stop()).reason, 'the worker did not stop as asked').toBe('stopped');
    await running;
    expect(Date.now() - started, 'stop() waited on a Redis that is gone').toBeLessThan(ENDS_WITHIN_MS);
    expect(
      logged.some((l) => l.level === 'info' && l.fields.event === 'stopping'),
      'the logger did not hear the stop',
    ).toBe(true);
  });
});
