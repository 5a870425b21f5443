/**
 * `lqb work` under an application's OpenTelemetry set-up (`node --import setup.mjs`, which
 * registers an SDK globally, as OpenTelemetry's Node SDK does): Laravel 8.83 produces
 * (laravel-dispatch.php), the CLI consumes, and its spans reach the registered provider.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '../helpers/php.js';
import { HANDLERS, lqb, php, scratchPerTest } from '../helpers/processes.js';

const QUEUE = 'cli-traced';
const current = scratchPerTest('otel-cli', QUEUE);

/** A set-up module that sends every finished span, as a JSON line, to `out`. */
function setupModule(out: string): string {
  return `import { createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
const require = createRequire(${JSON.stringify(join(root, 'package.json'))});
const { trace } = require('@opentelemetry/api');
const { BasicTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const exporter = {
  export(spans, done) {
    for (const span of spans) appendFileSync(${JSON.stringify(out)}, JSON.stringify({ name: span.name, kind: span.kind, attributes: span.attributes }) + '\\n');
    done({ code: 0 });
  },
  shutdown: async () => undefined,
};
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
`;
}

describe('lqb work with an OpenTelemetry SDK registered by the application', () => {
  it('makes a CONSUMER span per job Laravel pushed, in the registered provider', async () => {
    const { s } = current;
    const pushed = await php('laravel-dispatch.php', ['record', JSON.stringify({ n: 1, count: 2, queue: QUEUE })], s.env);
    expect(pushed.status, `laravel-dispatch.php failed: ${pushed.stderr}`).toBe(0);
    const uuids = pushed.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { uuid: string }).uuid);
    const out = join(s.dir, 'spans.jsonl');
    const setup = join(s.dir, 'otel-setup.mjs');
    writeFileSync(setup, setupModule(out));
    writeFileSync(out, '');
    const result = await lqb(['work', `--handlers=${HANDLERS}`, `--queue=${QUEUE}`, '--stop-when-empty', '--sleep=0'], s.env, {
      nodeFlags: ['--import', setup],
    });
    expect(result.status, `lqb work failed: ${result.stderr}`).toBe(0);
    const spans = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { name: string; kind: number; attributes: Record<string, unknown> });
    expect(
      spans.map((span) => [span.name, span.attributes['messaging.message.id'], span.attributes['laravel.job.outcome']]),
      'the CLI worker’s spans',
    ).toEqual(uuids.map((uuid) => [`process ${QUEUE}`, uuid, 'processed']));
  });
});
