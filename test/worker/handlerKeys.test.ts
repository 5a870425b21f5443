/**
 * Handler keys JavaScript spoiled: each key here is what JavaScript itself makes of a class name
 * written in a string literal with single backslashes (evaluated, not typed out by hand).
 */
import { describe, expect, it } from 'vitest';
import { handlerKeyProblem, nearestHandlerKey } from '../../src/worker/handlerKeys.js';

/** What a JS string literal holding `source` (single backslashes as written) evaluates to. */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- JavaScript's own reading of a string literal is the check
const asWrittenInJs = (source: string): string => new Function(`return '${source}';`)() as string;

describe('handlerKeyProblem', () => {
  it.each([
    ['App\\Jobs\\ResizeImage', 'App\\\\Jobs\\\\ResizeImage'],
    ['App\\Listeners\\SendShipmentNotification@handle', 'App\\\\Listeners\\\\SendShipmentNotification@handle'],
    ['App\\Models\\Jobs\\Prune', 'App\\\\Models\\\\Jobs\\\\Prune'],
  ])('%s written with single backslashes is refused, with the key meant', (source, meant) => {
    const key = asWrittenInJs(source);
    expect(key, 'what JavaScript made of it').not.toContain('\\');
    expect(handlerKeyProblem(key), `the problem with ${JSON.stringify(key)}`).toBe(
      `handler key ${JSON.stringify(key)} has no backslashes, so it matches no PHP class (probably "${meant}" was meant): write each backslash twice in JavaScript source, e.g. 'App\\\\Jobs\\\\ResizeImage' (or String.raw\`App\\Jobs\\ResizeImage\`)`,
    );
  });

  it.each([
    ['App\\Jobs\\notify\\Send', '\\n'],
    ['App\\Jobs\\v2\\Sync', '\\v'],
    ['App\\Jobs\\billing\\Refund', '\\b'],
    ['App\\Jobs\\tasks\\Run', '\\t'],
  ])('%s written with single backslashes holds a control character, and is refused naming it', (source, escape) => {
    const key = asWrittenInJs(source);
    expect(handlerKeyProblem(key), `the problem with ${JSON.stringify(key)}`).toMatch(
      new RegExp(
        `^handler key .* holds a control character where a backslash was meant \\('\\${escape}' in the source is one character\\)`,
      ),
    );
  });

  it.each([
    'App\\Jobs\\ResizeImage',
    'App\\Listeners\\SendShipmentNotification@handle',
    'SendEmail',
    'MailHandler@handle',
    'EventsProcessor',
    'Application',
    'Illuminate\\Queue\\CallQueuedClosure',
  ])('%s is a key as meant', (key) => {
    expect(handlerKeyProblem(key), `${key} was refused`).toBeUndefined();
  });
});

describe('nearestHandlerKey', () => {
  const keys = ['App\\Jobs\\ResizeImage', 'App\\Jobs\\SendInvoice', 'App\\Listeners\\Audit@handle'];
  it('names the key one letter off, or differing in case or backslashes', () => {
    expect(nearestHandlerKey('App\\Jobs\\ResizeImages', keys)).toBe('App\\Jobs\\ResizeImage');
    expect(nearestHandlerKey('App\\Jobs\\resizeimage', keys)).toBe('App\\Jobs\\ResizeImage');
    expect(nearestHandlerKey('App\\Listeners\\Audit@handle', ['AppListenersAudit@handle'])).toBe('AppListenersAudit@handle');
  });

  it('names none when no key is close', () => {
    expect(nearestHandlerKey('App\\Jobs\\GenerateReport', keys)).toBeUndefined();
    expect(nearestHandlerKey('App\\Jobs\\X', [])).toBeUndefined();
  });
});
