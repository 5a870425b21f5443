/**
 * Builders against real payloads: every shared fixture (Laravel 5.8 to 12) is built again from
 * what it says (the job's own properties, its Queueable values, its envelope settings) and
 * must come out byte for byte as that version of Laravel wrote it.
 */
import { describe, expect, it } from 'vitest';
import {
  buildJob,
  buildListener,
  buildPayload,
  decodePayload,
  QUEUEABLE_FIELDS,
  type LaravelProfile,
  type ListenerView,
  type UserJobView,
} from '../../src/index.js';
import { PhpFloat, toJS, type PhpValue } from '../../src/php/index.js';
import { sharedPayloads } from '../helpers/laravel.js';

const profileOf = (version: string): LaravelProfile => (version.startsWith('5.8') ? '5.8' : (version.split('.')[0] as LaravelProfile));
const plain = (value: PhpValue | undefined) => (value === undefined ? undefined : (toJS(value) as never));

describe('rebuilding real payloads', () => {
  it.each(sharedPayloads().map((r, i) => [`${r.laravel} #${i}`, r] as const))('%s comes out byte for byte', (_, record) => {
    const profile = profileOf(record.laravel);
    const { envelope, view } = decodePayload(record.payload);
    let command;
    if (view.kind === 'listener') {
      const listener = view as ListenerView;
      const own = (name: string) => listener.properties.find((p) => p.name === name)?.value;
      command = buildListener(
        {
          listener: listener.listener,
          method: listener.method,
          arguments: listener.arguments,
          tries: plain(listener.tries),
          maxExceptions: plain(listener.maxExceptions),
          backoff: plain(listener.backoff ?? own('retryAfter')),
          retryUntil: plain(listener.retryUntil ?? own('timeoutAt')),
          timeout: plain(listener.timeout),
          failOnTimeout: plain(own('failOnTimeout')),
        },
        profile,
      );
    } else {
      const job = view as UserJobView;
      const traitNames = new Set<string>([...QUEUEABLE_FIELDS, 'job', 'messageGroup', 'deduplicator']);
      command = buildJob(
        {
          className: job.className,
          properties: job.properties
            .filter((p) => !traitNames.has(p.name))
            .map((p) => ({ name: p.name, value: p.value, visibility: p.visibility, declaringClass: p.declaringClass })),
          queueable: Object.fromEntries(job.properties.filter((p) => traitNames.has(p.name)).map((p) => [p.name, p.value])),
          serializesModels: job.className === 'App\\Jobs\\ImportCsv',
        },
        profile,
      );
    }
    const num = (key: string) => envelope[key] as number | null | undefined;
    const built = buildPayload(command, {
      profile,
      displayName: envelope.displayName as string,
      uuid: envelope.uuid as string | undefined,
      id: envelope.id as string,
      maxTries: num('maxTries'),
      maxExceptions: num('maxExceptions'),
      failOnTimeout: envelope.failOnTimeout as boolean | undefined,
      backoff: envelope.backoff as string | null | undefined,
      timeout: num('timeout'),
      retryUntil: num('retryUntil') ?? num('timeoutAt'),
      delay: num('delay'),
      createdAt: num('createdAt') ?? undefined,
      batchId: (envelope.data as Record<string, string | null>).batchId,
    });
    expect(built.raw).toBe(record.payload);
  });
});

describe('builders', () => {
  it('keep a float a float and a visibility where the hints say', () => {
    const command = buildJob(
      { className: 'App\\Jobs\\Charge', properties: [{ name: 'amount', value: 10, hint: 'float', visibility: 'protected' }], serializesModels: false },
      '8',
    );
    expect(command.props.get('\0*\0amount')).toEqual(new PhpFloat(10));
  });
});
