/**
 * What `lqb port CLASS` writes for one job or queued-listener class of the app: a TypeScript
 * handler module typed by the class's shape (its declarations beside it, as `lqb shapes --types`
 * writes them; a listener's event as its job.args[0]), its
 * failed() hook, a JavaScript stand-in for each method PHP computes that `lqb shapes` could not
 * translate, a note for its middleware; and a test that runs the handler with runJob on a payload
 * the app's own PHP made (`lqb fixtures`) from sample values of the shape's types. As written,
 * the module compiles under `tsc --strict` and the test passes: the handler's body is the user's.
 */
import type { ClassShape, PropertyShape, ShapesFile, TranslatedMethod } from '../shapes/shape.js';
import { declarationsFor } from '../shapes/types.js';
import { QUEUEABLE } from '../shapes/command.js';

const TRANSLATED: readonly TranslatedMethod[] = ['uniqueId', 'backoff', 'retryUntil', 'tags', 'displayName'];

/** The files `lqb port` writes, by name, and what it has to say about the class. */
export interface PortedClass {
  /** The class's short name: `ShipOrder`. */
  name: string;
  files: Record<string, string>;
  /** The queue the class is given of its own, and the PHP line that gives it. */
  queue: string;
  phpLine: string;
}

/**
 * Sample values of the shape's types for the properties that have no default (those the class
 * is made with), as `lqb fixtures --props` takes them; a property of another class than a model
 * is left out (left uninitialized, PHP's serialize() skips it), as is one a constructor default fills.
 */
export function sampleProps(given: ClassShape, shapes: ShapesFile): Record<string, unknown> {
  // A queued listener is made from its event: the props are the event's.
  const shape = listenedEvent(given, shapes)?.event ?? given;
  const props: Record<string, unknown> = {};
  const defaulted = new Set((shape.constructorParams ?? []).filter((param) => param.default !== undefined).map((param) => param.name));
  for (const property of shape.properties) {
    if (property.default !== undefined || defaulted.has(property.name) || !property.serialized) continue;
    const value = sampleOf(property, shapes);
    if (value !== undefined) props[property.name] = value;
  }
  return props;
}

function sampleOf(property: PropertyShape, shapes: ShapesFile): unknown {
  if (property.model) return { '@model': property.model.class, id: 1 };
  const type = (property.type ?? 'string').replace(/^\?/, '');
  const first = type.split('|').find((part) => part !== 'null') ?? 'string';
  switch (first) {
    case 'int':
      return 1;
    case 'float':
      return 1.5;
    case 'string':
    case 'mixed':
      return 'sample';
    case 'bool':
    case 'true':
      return true;
    case 'false':
      return false;
    case 'array':
    case 'iterable':
      return [];
    default:
      if (/^(Carbon|Illuminate\\Support\\Carbon|DateTime|DateTimeImmutable|DateTimeInterface|Carbon\\Carbon(Immutable)?)$/.test(first))
        return '2026-01-01T00:00:00+00:00';
      if (shapes.classes[first]?.kind === 'model') return { '@model': first, id: 1 };
      return property.nullable ? null : undefined;
  }
}

/** The handler module, its declarations and its test, for `shape` and a payload the app made. */
export function portClass(
  shape: ClassShape,
  shapes: ShapesFile,
  payload: string,
  fixturesCommand: string,
  /** The job middleware the sample instance runs through (lqb fixtures reads it off the instance). */
  middleware: readonly Middleware[] = [],
): PortedClass {
  const name = shape.name.split('\\').at(-1)!;
  const queue = name.replace(/(?<=[a-z0-9])([A-Z])/g, '-$1').toLowerCase();
  // A queued listener is looked up by `Class@method`, and handed its event as job.args[0].
  const listened = listenedEvent(shape, shapes);
  const key = JSON.stringify(listened ? `${shape.name}@${listened.method}` : shape.name);
  const methods = TRANSLATED.filter((method) => shape.methods.includes(method));
  const lines: string[] = [
    `// ${shape.name}, moved to Node: written by \`lqb port\`. The handler's body is yours to fill.`,
    `// Run it with: lqb work --queue=${queue} --handlers=${name}.ts --shapes=lqb-shapes.json`,
    "import { defineHandlers } from 'laravel-queue-bridge';",
    `import type { Jobs } from './${name}.jobs.js';`,
    '',
  ];
  for (const method of methods) {
    const expression = shape.expressions?.[method];
    if (expression && !('untranslated' in expression))
      lines.push(`// ${method}(): translated from PHP by lqb shapes; the worker computes it from the shapes file.`);
  }
  for (const note of middlewareNotes(middleware)) lines.push(note);
  if (middleware.length === 0 && shape.methods.includes('middleware'))
    lines.push(`// middleware(): ${shape.name} declares job middleware, none for these sample values; Node does not run PHP's.`);
  lines.push('export default defineHandlers<Jobs>({', `  ${key}: {`, '    async handle(job) {');
  // The properties it is made with first (no default), then the rest of its own.
  const subject = listened?.event ?? shape;
  // Its own data: not Queueable's properties (QUEUEABLE, as the shaped builder knows them), nor the retry rules it declares.
  const own = subject.properties.filter(
    (property) =>
      property.serialized &&
      !QUEUEABLE.has(property.name) &&
      !Object.hasOwn(subject.declared, property.name) &&
      property.name !== 'batchId',
  );
  const read = [
    ...own.filter((property) => property.default === undefined),
    ...own.filter((property) => property.default !== undefined),
  ].slice(0, 3);
  const holder = listened ? 'job.args[0]' : 'job.command';
  lines.push(
    listened
      ? `      // TODO: what ${name}::${listened.method}() does. job.args[0] is the ${listened.event.name} it handles, typed:`
      : `      // TODO: what ${name}::handle() does. The command holds the class's properties, typed:`,
  );
  for (const property of read) lines.push(`      //   ${holder}.${property.name}`);
  lines.push(`      void ${holder};`, '    },');
  if (shape.methods.includes('failed'))
    lines.push(
      '    async failed(job, error) {',
      `      // TODO: what ${name}::failed() does; it runs once the job has failed for good.`,
      '      void job;',
      '      void error;',
      '    },',
    );
  for (const method of methods) {
    const expression = shape.expressions?.[method];
    if (expression && !('untranslated' in expression)) continue;
    const why = expression && 'untranslated' in expression ? ` (${expression.untranslated})` : '';
    lines.push(`    // TODO: ${name}::${method}() is PHP that lqb shapes did not translate${why}: return what it returns.`);
    lines.push(`    ${method}: ${STAND_INS[method]},`);
  }
  lines.push('  },', '});', '');
  const test = [
    `// ${shape.name} run by the worker's own code on a payload the app's PHP made, written by \`lqb port\`.`,
    "import { expect, it } from 'vitest';",
    "import { runJob } from 'laravel-queue-bridge/testing';",
    `import handlers from './${name}.js';`,
    '',
    `// Made by: ${fixturesCommand}`,
    `const payload = ${JSON.stringify(payload)};`,
    '',
    `it(${JSON.stringify(`runs ${shape.name} on a payload the app made`)}, async () => {`,
    '  const result = await runJob(handlers, payload);',
    "  expect(result.error?.message, 'the failure').toBeUndefined();",
    "  expect(result.outcome, 'what became of the job').toBe('completed');",
    '});',
    '',
  ];
  return {
    name,
    queue,
    files: {
      [`${name}.ts`]: lines.join('\n'),
      [`${name}.jobs.d.ts`]: declarationsFor(shapes),
      [`${name}.test.ts`]: test.join('\n'),
    },
    phpLine: listened
      ? `PHP: add public $queue = '${queue}'; to ${shape.name} (a listener's queue), so that only lqb work --queue=${queue} takes it`
      : `PHP: add $this->onQueue('${queue}'); to ${shape.name}'s constructor, so that only lqb work --queue=${queue} takes it`,
  };
}

/** A job middleware as PHP made it for the sample instance: its class and public properties. */
export interface Middleware {
  class: string;
  props: Record<string, unknown>;
}

/** A comment line or two a middleware: what it does in PHP and what Node does with it. */
function middlewareNotes(middleware: readonly Middleware[]): string[] {
  const notes: string[] = [];
  for (const { class: name, props } of middleware) {
    const short = name.split('\\').at(-1)!;
    if (name === 'Illuminate\\Queue\\Middleware\\WithoutOverlapping') {
      const options = [
        props.releaseAfter ? `releaseAfter: ${String(props.releaseAfter)}` : '',
        props.expiresAfter ? `expireAfter: ${String(props.expiresAfter)}` : '',
        props.releaseAfter === false ? 'dontRelease: true' : '',
      ].filter(Boolean);
      notes.push(
        `// middleware: WithoutOverlapping (key ${JSON.stringify(props.key)}${options.length ? `, ${options.join(', ')}` : ''}): wrap the handler in`,
        `//   withoutOverlapping((job) => <the key>, { ${options.join(', ')} }, handler) from laravel-queue-bridge: the same lock as PHP's, so neither side overlaps the other.`,
      );
    } else if (/^Illuminate\\Queue\\Middleware\\RateLimited(WithRedis)?$/.test(name)) {
      notes.push(
        `// middleware: ${short}: wrap the handler in rateLimited(<the limiter's name>, (job) => ({ maxAttempts, key }), handler) from`,
        "//   laravel-queue-bridge, with the limit the app's RateLimiter::for() gives: the same counters as PHP's.",
      );
    } else if (name === '?') {
      notes.push(`// middleware(): PHP could not make it for the sample values (${String(props.error)}); Node does not run PHP's.`);
    } else {
      notes.push(`// middleware: ${name}: PHP middleware Node does not run; do in the handler what it does.`);
    }
  }
  return notes;
}

/** A queued listener's handling method and the shape of the event it handles; undefined for a job. */
function listenedEvent(shape: ClassShape, shapes: ShapesFile): { method: string; event: ClassShape } | undefined {
  if (shape.kind !== 'listener') return undefined;
  for (const handled of shape.handles ?? []) {
    const event = handled.event === null ? undefined : shapes.classes[handled.event];
    if (event) return { method: handled.method, event };
  }
  return undefined;
}

/** A stand-in that compiles and returns a value of the right type, until the user writes the method. */
const STAND_INS: Record<TranslatedMethod, string> = {
  uniqueId: "(job) => String(Object.values(job.command)[0] ?? '')",
  backoff: '() => 0',
  retryUntil: '() => null',
  tags: '() => []',
  displayName: `(job) => job.name`,
};
