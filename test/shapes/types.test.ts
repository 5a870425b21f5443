/**
 * The declarations `lqb shapes --types` writes for php-fixture-gen/shapes-app, compiled by
 * `tsc --strict` with handlers written against them through `defineHandlers<Jobs>`: typed reads
 * compile; a misused property and a name not in Jobs do not, with the errors TypeScript gives.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineHandlers, type HandlerJob, type HandlerMap } from '../../src/index.js';
import { root } from '../helpers/php.js';

const dir = mkdtempSync(join(tmpdir(), 'lqb-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pkg = relative(dir, join(root, 'src/index.js')).split('\\').join('/');

const GOOD = `
import { defineHandlers, type TypedHandlerJob } from '${pkg}';
import type { App, Jobs, LqbTypes } from './jobs.js';

const ship = async (job: TypedHandlerJob<Jobs['App\\\\Jobs\\\\ShipOrder']>) => {
  // Typed, no default, set by the constructor: reflection cannot tell that it is always set,
  // and PHP does not serialize an uninitialized property, so it may be missing.
  const id: number | undefined = job.command.orderId;
  const secret: string | undefined = job.command.secret;
  const notes: LqbTypes.PhpArray | null = job.command.notes;
  const coupon: string | null | undefined = job.command.coupon;
  const express: boolean = job.command.express;
  const weight: number = job.command.weight;
  return [id?.toFixed(), secret?.toUpperCase(), notes, coupon?.toUpperCase(), express, weight, job.attempts, job.signal.aborted];
};
ship.failed = async (job: TypedHandlerJob<Jobs['App\\\\Jobs\\\\ShipOrder']>, error: unknown) => [job.command.orderId, error];
// JavaScript for the PHP methods Node cannot run, typed by the class's command.
ship.uniqueId = (job: { name: string; command: App.Jobs.ShipOrder }) => String(job.command.orderId ?? job.command.weight);
ship.backoff = () => [1, 2];
ship.retryUntil = () => new Date();
ship.tags = (job: { command: App.Jobs.ShipOrder }) => [job.command.express ? 'express' : 'plain'];
ship.displayName = async (job: { name: string }) => job.name;

export default defineHandlers<Jobs>({
  'App\\\\Jobs\\\\ShipOrder': ship,
  'App\\\\Jobs\\\\SyncUser': async (job) => {
    const user: LqbTypes.ModelIdentifier = job.command.user;
    const friends: (number | string)[] | undefined = job.command.friends?.id;
    return [user.id, user.connection, friends];
  },
  'App\\\\Jobs\\\\MonthlyReport': async (job) => {
    // The parent's private tenant is not serialized under SerializesModels: not there to read.
    const month: number = job.command.month;
    return [month, job.command.version];
  },
  // As a Laravel job class reads: handle() and failed(), both given the class's type.
  'App\\\\Jobs\\\\PlainReport': {
    handle: async (job) => [job.command.tenant.toUpperCase(), job.command.options?.landscape, job.command.pages ?? 0],
    failed: async (job, error) => [job.command.tenant.toUpperCase(), error instanceof Error ? error.message : String(error)],
  },
  'App\\\\Listeners\\\\SendShipmentNotification@handle': async (job) => {
    const event: App.Events.OrderShipped = job.args[0];
    return event.orderId.toFixed() + event.carrier;
  },
  'Illuminate\\\\Notifications\\\\SendQueuedNotifications': async (job) => job.command.notification.invoiceId.toFixed(),
  'Illuminate\\\\Mail\\\\SendQueuedMailable': async (job) => job.command.mailable.orderId.toFixed(),
  // A notification under its own class, and on one channel; a mailable under its own class.
  'App\\\\Notifications\\\\InvoicePaid': async (job) => [job.args[0].length, job.args[1].invoiceId.toFixed(), job.command.notification.invoiceId],
  'App\\\\Notifications\\\\InvoicePaid@mail': async (job) => job.args[1].invoiceId.toFixed(),
  'App\\\\Mail\\\\OrderShippedMail': async (job) => job.args[0].orderId.toFixed(),
});

// Without a type argument: today's HandlerMap, any name, job.command a record.
export const loose = defineHandlers({
  'Anything\\\\At\\\\All': async (job) => [job.command.whatever, job.args.length],
  'Other@fire': Object.assign(async () => undefined, { failed: async (_job: unknown, error: unknown) => error }),
});
`;

// connect<Jobs>() types dispatch as defineHandlers<Jobs> types handlers; connect() takes anything.
const DISPATCH = `
import { connect } from '${pkg}';
import type { Jobs } from './jobs.js';
export async function send() {
  const typed = await connect<Jobs>();
  await typed.dispatch('App\\\\Jobs\\\\ShipOrder', { orderId: 7, secret: 's', express: true, weight: 1.5 }, { queue: 'orders' });
  await typed.dispatch('App\\\\Jobs\\\\SyncUser', { user: { class: 'App\\\\Models\\\\User', id: 1, relations: [], connection: null } });
  const loose = await connect();
  await loose.dispatch('Anything\\\\At\\\\All', { whatever: [1, 'two'] });
}
`;

const DISPATCH_WRONG = `
import { connect } from '${pkg}';
import type { Jobs } from './jobs.js';
export async function send() {
  const queue = await connect<Jobs>();
  await queue.dispatch('App\\\\Jobs\\\\ShipOrder', { orderId: 'x', secret: 's' });
  await queue.dispatch('App\\\\Jobs\\\\ShipOrdr', {});
  await queue.dispatch('App\\\\Listeners\\\\SendShipmentNotification@handle', {});
  await queue.dispatch('App\\\\Jobs\\\\ShipOrder', { orderId: 7 });
  await queue.dispatch('App\\\\Jobs\\\\SyncUser');
}
`;

const MISUSED = `
import { defineHandlers } from '${pkg}';
import type { Jobs } from './jobs.js';
export default defineHandlers<Jobs>({
  'App\\\\Jobs\\\\ShipOrder': async (job) => job.command.orderId?.toUpperCase(),
});
`;

const METHOD_MISUSED = `
import { defineHandlers } from '${pkg}';
import type { Jobs } from './jobs.js';
const ship = async () => undefined;
ship.uniqueId = (job: { name: string; command: { weight: string } }) => job.command.weight.toUpperCase();
export default defineHandlers<Jobs>({ 'App\\\\Jobs\\\\ShipOrder': ship });
`;

const UNKNOWN = `
import { defineHandlers } from '${pkg}';
import type { Jobs } from './jobs.js';
export default defineHandlers<Jobs>({
  'App\\\\Jobs\\\\ShipOrdr': async (job) => job.command,
});
`;

const NOT_SERIALIZED = `
import { defineHandlers } from '${pkg}';
import type { Jobs } from './jobs.js';
export default defineHandlers<Jobs>({
  'App\\\\Jobs\\\\MonthlyReport': async (job) => job.command.tenant,
});
`;

/** tsc's diagnostics, by file: `file(line,col): error TSnnnn: …`. */
let diagnostics: string[] = [];

describe('lqb shapes --types', () => {
  beforeAll(() => {
    const made = spawnSync(
      process.execPath,
      [
        join(root, 'dist/cli/main.js'),
        'shapes',
        `--app=${join(root, 'php-fixture-gen/shapes-app')}`,
        '--out=lqb-shapes.json',
        '--types=jobs.d.ts',
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(made.stderr).toBe('');
    expect(made.status).toBe(0);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(join(dir, 'good.ts'), GOOD);
    writeFileSync(join(dir, 'misused.ts'), MISUSED);
    writeFileSync(join(dir, 'unknown.ts'), UNKNOWN);
    writeFileSync(join(dir, 'not-serialized.ts'), NOT_SERIALIZED);
    writeFileSync(join(dir, 'dispatch.ts'), DISPATCH);
    writeFileSync(join(dir, 'dispatch-wrong.ts'), DISPATCH_WRONG);
    writeFileSync(join(dir, 'method-misused.ts'), METHOD_MISUSED);
    // One tsc run for all the files: each file's errors are its own.
    const tsc = spawnSync(
      process.execPath,
      [
        join(root, 'node_modules/typescript/bin/tsc'),
        '--strict',
        '--noEmit',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--skipLibCheck',
        '--types',
        'node',
        '--typeRoots',
        join(root, 'node_modules/@types'),
        '--pretty',
        'false',
        'good.ts',
        'misused.ts',
        'unknown.ts',
        'not-serialized.ts',
        'dispatch.ts',
        'dispatch-wrong.ts',
        'method-misused.ts',
      ],
      { cwd: dir, encoding: 'utf8', timeout: 60_000 },
    );
    diagnostics = tsc.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
  });

  it("declares an interface per class in PHP's namespaces, and Jobs by handler name", () => {
    const text = readFileSync(join(dir, 'jobs.d.ts'), 'utf8');
    expect(text).toContain('export declare namespace App {');
    expect(text).toMatch(
      /export interface ShipOrder \{[^}]*\n\s+orderId: number;[^}]*\n\s+notes: LqbTypes\.PhpArray \| null;[^}]*\n\s+coupon\?: string \| null;/,
    );
    // What a producer must give: typed, no default, not nullable (orderId, secret); coupon (?string) and the defaults may be left out.
    expect(text).toContain('"App\\\\Jobs\\\\ShipOrder": { command: App.Jobs.ShipOrder; required: "orderId" | "secret" };');
    expect(text).toContain('"App\\\\Listeners\\\\SendShipmentNotification@handle": { args: [App.Events.OrderShipped] };');
  });

  it('typed handlers that read their properties compile under --strict', () => {
    expect(
      diagnostics.filter((line) => line.startsWith('good.ts')),
      'errors in good.ts',
    ).toEqual([]);
  });

  it('a property misused for its PHP type does not compile (TS2339)', () => {
    expect(diagnostics.filter((line) => line.startsWith('misused.ts'))).toEqual([
      expect.stringMatching(/^misused\.ts\(5,\d+\): error TS2339: Property 'toUpperCase' does not exist on type 'number'/),
    ]);
  });

  it('a uniqueId function that reads a property as the wrong PHP type does not compile (TS2322)', () => {
    expect(diagnostics.filter((line) => line.startsWith('method-misused.ts'))).toEqual([
      expect.stringMatching(/^method-misused\.ts\(6,\d+\): error TS2322: .*uniqueId/),
    ]);
  });

  it('a handler name that is not in Jobs does not compile (TS2353)', () => {
    const errors = diagnostics.filter((line) => line.startsWith('unknown.ts'));
    expect(errors[0]).toMatch(
      /^unknown\.ts\(5,\d+\): error TS2353: Object literal may only specify known properties, and ''App\\\\Jobs\\\\ShipOrdr'' does not exist/,
    );
    // Its handler, under no known name, has nothing to type its job by.
    expect(errors.slice(1)).toEqual([
      expect.stringMatching(/^unknown\.ts\(5,\d+\): error TS7006: Parameter 'job' implicitly has an 'any' type/),
    ]);
  });

  it('a property serialize() never writes is not there to read (TS2339)', () => {
    expect(diagnostics.filter((line) => line.startsWith('not-serialized.ts'))).toEqual([
      expect.stringMatching(/^not-serialized\.ts\(5,\d+\): error TS2339: Property 'tenant' does not exist/),
    ]);
  });

  it("connect<Jobs>() dispatches the classes of Jobs with their properties' types; connect() takes any", () => {
    expect(
      diagnostics.filter((line) => line.startsWith('dispatch.ts')),
      'errors in dispatch.ts',
    ).toEqual([]);
  });

  it('a dispatch with a property of the wrong type, a class not in Jobs, or a listener does not compile', () => {
    const errors = diagnostics.filter((line) => line.startsWith('dispatch-wrong.ts'));
    expect(errors, 'tsc on dispatch-wrong.ts').toEqual([
      expect.stringMatching(/^dispatch-wrong\.ts\(6,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/),
      expect.stringMatching(/^dispatch-wrong\.ts\(7,\d+\): error TS2345: Argument of type '"App\\\\Jobs\\\\ShipOrdr"' is not assignable/),
      expect.stringMatching(
        /^dispatch-wrong\.ts\(8,\d+\): error TS2345: Argument of type '"App\\\\Listeners\\\\SendShipmentNotification@handle"' is not assignable/,
      ),
      // A required property left out (secret: typed, no default), and a class with required ones given none.
      expect.stringMatching(
        /^dispatch-wrong\.ts\(9,\d+\): error TS2345: Argument of type '\{ orderId: number; \}' is not assignable to .*Pick<ShipOrder, "orderId" \| "secret">/,
      ),
      expect.stringMatching(/^dispatch-wrong\.ts\(10,\d+\): error TS2554: Expected 2-3 arguments, but got 1/),
    ]);
  });

  it('defineHandlers returns the map it is given', () => {
    const map: HandlerMap = { 'App\\Jobs\\X': async () => undefined };
    expect(defineHandlers(map)).toBe(map);
  });

  it('defineHandlers makes { handle, failed } the function the worker calls, failed beside it, this kept', async () => {
    const calls: unknown[] = [];
    const map = defineHandlers({
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the `as` below types `this` in the methods, which the handler union alone does not
      'App\\Jobs\\X': {
        prefix: 'x:',
        async handle(job) {
          calls.push(`${this.prefix}handle ${job.name}`);
        },
        async failed(job, error) {
          calls.push(`${this.prefix}failed ${job.name} ${(error as Error).message}`);
        },
      } as { prefix: string; handle(job: HandlerJob): Promise<void>; failed(job: HandlerJob, error: unknown): Promise<void> },
    });
    const handler = map['App\\Jobs\\X']!;
    expect(typeof handler, 'what the worker calls').toBe('function');
    const job = { name: 'App\\Jobs\\X' } as HandlerJob;
    await handler(job);
    await handler.failed!(job, new Error('boom'));
    expect(calls).toEqual(['x:handle App\\Jobs\\X', 'x:failed App\\Jobs\\X boom']);
  });
});
