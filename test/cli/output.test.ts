import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { LineWriter } from '../../src/cli/output.js';
import { PENDING_BYTES_AT, pendingOutput } from '../../src/internal/pending-output.js';

/** What a watchdog would write out now: the gathered bytes in shared memory, as text. */
function gathered(): string {
  const output = pendingOutput();
  if (!output) return '(nothing registered)';
  const count = Atomics.load(new Int32Array(output.buffer, 0, 1), 0);
  return Buffer.from(new Uint8Array(output.buffer, PENDING_BYTES_AT, count)).toString('utf8');
}

function sink(): { out: Writable; writes: string[] } {
  const writes: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString('utf8'));
      done();
    },
  });
  return { out, writes };
}

let writer: LineWriter | undefined;
afterEach(() => {
  writer?.close();
  writer = undefined;
});

describe("LineWriter: lqb work's lines, one write per turn of the event loop", () => {
  it('gathers the lines of one turn into one write, in order, and the next turn’s into another', async () => {
    const { out, writes } = sink();
    writer = new LineWriter(out);
    writer.write('[2026-11-26 08:00:00][a1] Processing: App\\Jobs\\One');
    writer.write('[2026-11-26 08:00:00][a1] Processed:  App\\Jobs\\One');
    expect(writes, 'writes before the turn ends').toEqual([]);
    await nextTurn();
    writer.write('third é ✓');
    await nextTurn();
    expect(writes, 'the writes, one per turn').toEqual([
      '[2026-11-26 08:00:00][a1] Processing: App\\Jobs\\One\n[2026-11-26 08:00:00][a1] Processed:  App\\Jobs\\One\n',
      'third é ✓\n',
    ]);
  });

  it('keeps what it gathered in shared memory for a watchdog until it is written, as UTF-8', async () => {
    const { out, writes } = sink();
    writer = new LineWriter(out);
    writer.write('Processing: App\\Jobs\\Slow é');
    expect(gathered(), 'the bytes a watchdog would write out before the turn ends').toBe('Processing: App\\Jobs\\Slow é\n');
    await nextTurn();
    expect(gathered(), 'the bytes left once the turn wrote them').toBe('');
    expect(writes.join(''), 'what was written').toBe('Processing: App\\Jobs\\Slow é\n');
  });

  it('writes what it gathered before a line that may not fit, and a line larger than its buffer whole, in order', async () => {
    const { out, writes } = sink();
    writer = new LineWriter(out);
    const long = 'x'.repeat(LineWriter.CAPACITY);
    writer.write('first');
    writer.write(long);
    writer.write('last');
    await nextTurn();
    expect(
      writes.map((text) => (text.length > 100 ? `${text.length} chars` : text)),
      'the writes',
    ).toEqual(['first\n', `${long.length + 1} chars`, 'last\n']);
  });

  it('writes what is gathered when closed, then each later line at once, and leaves nothing registered for a watchdog', () => {
    const { out, writes } = sink();
    const closing = new LineWriter(out);
    closing.write('one');
    closing.close();
    expect(writes, 'the writes once closed').toEqual(['one\n']);
    closing.write('two');
    expect(writes, 'the writes after a line said once closed').toEqual(['one\n', 'two\n']);
    expect(pendingOutput(), 'what a watchdog started now would write out').toBeUndefined();
  });
});
