/**
 * Laravel 8.83 produces, lqb work consumes: a queued notification (ChannelManager::send, as
 * `$user->notify()` does) and a queued mailable (Mailable::queue), found by the handlers keyed by
 * the notification class with its channel and by the mailable class, as the log names them.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { HANDLERS, START_LINE_ONLY, lqb, scratchPerTest, type Scratch, laravelDispatch as pushedByLaravel } from '../helpers/processes.js';

const QUEUE = 'bridge';
// A Redis prefix and scratch directory of each test's own, removed after it.
const current = scratchPerTest('e2e-notify', QUEUE);
let s: Scratch;
beforeEach(() => ({ s } = current));

const laravelDispatch = (kind: string, options: object) => pushedByLaravel(s.env, QUEUE, kind, options);

describe('Laravel queues a notification and a mailable, lqb work runs them', () => {
  it('under the notification class @ its channel and the mailable class, with the notifiables and the notification as job.args', async () => {
    const notified = await laravelDispatch('notification', { userId: 3, invoiceId: 7 });
    const mailed = await laravelDispatch('mailable', { orderId: 5, to: 'ada@example.com' });
    expect(notified.map((p) => p.class)).toEqual(['App\\Notifications\\InvoicePaid']);
    expect(mailed.map((p) => p.class)).toEqual(['App\\Mail\\OrderShippedMail']);

    const result = await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env);
    expect(result.stderr, 'lqb work said more than its start line').toMatch(START_LINE_ONLY);
    expect(result.status).toBe(0);
    const runs = s.nodeRuns();
    expect(runs.map((r) => r.class)).toEqual(['App\\Notifications\\InvoicePaid@mail', 'App\\Mail\\OrderShippedMail']);

    const [notification, mailable] = runs;
    expect(notification).toMatchObject({ uuid: notified[0]!.uuid, view: 'notification', channels: ['mail'] });
    // The User model (connection 'mysql' on the class) as SerializesModels left it, one id each.
    expect(notification!.notifiables).toEqual([
      { class: 'App\\Models\\User', classIsAlias: false, id: 3, isCollection: false, relations: [], connection: 'mysql' },
    ]);
    expect(notification!.notification).toMatchObject({ invoiceId: 7 });
    expect(typeof notification!.notification.id).toBe('string');

    expect(mailable).toMatchObject({ uuid: mailed[0]!.uuid, view: 'mailable', mailableClass: 'App\\Mail\\OrderShippedMail' });
    expect(mailable!.mailable).toMatchObject({
      orderId: 5,
      subject: 'Your order shipped',
      to: [{ name: null, address: 'ada@example.com' }],
    });

    // The log names them as Laravel's worker does: by displayName.
    expect(result.stdout).toMatch(/Processed: +App\\Notifications\\InvoicePaid/);
    expect(result.stdout).toMatch(/Processed: +App\\Mail\\OrderShippedMail/);
  });
});
