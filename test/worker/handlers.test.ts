/**
 * Handler lookup and job.args for Laravel's wrappers, on what Debian's Laravel 8.83 queued:
 * a notification is found under `Notification@channel`, `Notification`, then the wrapper; a
 * mailable under its class, then the wrapper; job.args carries the notifiables and the
 * notification, or the mailable.
 */
import { describe, expect, it } from 'vitest';
import { commandOf, decodePayload, Encrypter, type MailableView, type NotificationView } from '../../src/index.js';
import { parseAppKey } from '../../src/laravel/index.js';
import { argsOf, handlerNames } from '../../src/worker/index.js';
import { debianPayloads } from '../helpers/laravel.js';

const records = debianPayloads().filter((r) => r.expect.kind === 'notification' || r.expect.kind === 'mailable');
const named = (name: string) => {
  const record = records.find((r) => r.name === name);
  if (!record) throw new Error(`no fixture named ${name}`);
  return record;
};
const open = (record: (typeof records)[number]) => {
  const decoded = decodePayload(record.payload);
  const encrypter = record.appKey ? new Encrypter(parseAppKey(record.appKey), record.cipher ?? 'AES-256-CBC') : undefined;
  return { decoded, view: commandOf(decoded, encrypter).view };
};

describe('handler names of queued notifications and mailables', () => {
  it.each(records.map((r) => [r.name!, r] as const))('%s: the class the log names (displayName) first, the wrapper last', (_, record) => {
    const { decoded, view } = open(record);
    const names = handlerNames(decoded, view);
    const wrapper = record.expect.commandName as string;
    expect(names.at(-1)).toBe(wrapper);
    expect(names).toContain(record.expect.displayName);
    if (view.kind === 'notification') {
      expect(names).toEqual([`${record.expect.displayName}@${view.channelNames[0]}`, record.expect.displayName, wrapper]);
    } else {
      expect(names).toEqual([record.expect.displayName, wrapper]);
    }
  });

  it('one notification on two channels is two jobs, one under each Class@channel', () => {
    const channels = ['notification/two-channels-via-queues#mail', 'notification/two-channels-via-queues#database'].map((name) => {
      const { decoded, view } = open(named(name));
      return handlerNames(decoded, view)[0];
    });
    expect(channels).toEqual(['App\\Notifications\\OrderStatusChanged@mail', 'App\\Notifications\\OrderStatusChanged@database']);
  });
});

describe('job.args and the typed views', () => {
  it('a notification to a model: the model as one identifier, the notification with its properties', () => {
    const { view } = open(named('notification/mail'));
    const notification = view as NotificationView;
    expect(notification.notificationClass).toBe('App\\Notifications\\InvoicePaid');
    expect(notification.channelNames).toEqual(['mail']);
    const [notifiables, props] = argsOf(view) as [unknown[], Record<string, unknown>];
    expect(notifiables).toEqual([
      {
        class: 'App\\Models\\User',
        classIsAlias: false,
        id: 1,
        isCollection: false,
        relations: ['posts', 'posts.comments'],
        connection: 'sqlite',
      },
    ]);
    expect(props).toMatchObject({ amount: 4200, memo: 'Merci — 感谢', order: { class: 'App\\Models\\Order', id: 'ord_7YF2K9' } });
  });

  it('an anonymous notifiable: its routes', () => {
    const { view } = open(named('notification/anonymous'));
    const [notifiables] = argsOf(view) as [unknown[]];
    expect(notifiables).toEqual([{ routes: { mail: 'ops@example.com' } }]);
    expect((view as NotificationView).notifiableList[0]!.model).toBeUndefined();
  });

  it('an encrypted notification, once decrypted, is found and read the same way', () => {
    const { decoded, view } = open(named('encrypted/gcm-notification'));
    expect(handlerNames(decoded, view)[1]).toBe('App\\Notifications\\SecurityAlert');
    expect((argsOf(view) as [unknown[]])[0]).toEqual([expect.objectContaining({ class: 'App\\Models\\User', id: 1 })]);
  });

  it('a mailable: its class, recipients and own properties', () => {
    const { view } = open(named('mailable/model'));
    expect((view as MailableView).mailableClass).toBe('App\\Mail\\OrderShippedMail');
    const [mailable] = argsOf(view) as [Record<string, unknown>];
    expect(mailable).toMatchObject({
      greeting: 'Olá',
      to: [{ name: 'Ada Lovelace', address: 'ada@example.com' }],
      subject: 'Your order shipped ✓',
    });
  });
});
