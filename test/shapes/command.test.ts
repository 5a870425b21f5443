/**
 * One table of every kind of JSON value against every declared property type, run through both
 * ways in: `lqb dispatch --props=JSON --shapes` and the library's `connect().dispatch()` (given
 * `JSON.parse` of the same text). Each cell is either accepted, and then real PHP 8.2 unserializes
 * the command Node pushed and says what the property holds (PHP's typed properties are strict
 * there: what it reads back is the truth), or refused with one line naming class, property, type
 * and value, and nothing pushed. The accepted values of a row go through the built CLI as a user
 * runs it, one process per row; each refused cell through the CLI's own dispatch command in this
 * process (its flag table, --props parsing and error wording), as a process per cell would cost
 * the shared machine a minute (test/e2e/shaped-dispatch.test.ts checks refusals as processes).
 *
 * The class is php-fixture-gen/typed-props.php, its shape read by `lqb shapes --bootstrap`.
 * Where the two ways differ it is because JavaScript cannot tell `1.0` from `1`, nor keep an int
 * past 2^53: the CLI reads numbers as PHP's json_decode does, the library gets JS numbers.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError, parserOptions } from '../../src/cli/command.js';
import { dispatch as dispatchCommand } from '../../src/cli/dispatch.js';
import { connect, type LaravelQueue } from '../../src/connect/index.js';
import { readShapes } from '../../src/shapes/read.js';
import type { ShapesFile } from '../../src/shapes/shape.js';
import { root } from '../helpers/php.js';
import { lqb, scratch, type RunResult, type Scratch } from '../helpers/processes.js';
import { REDIS_URL, rawClient, uniquePrefix, dropQueue } from '../helpers/redis.js';

const CLASS = 'App\\Jobs\\TakesEveryType';
const FIXTURE = join(root, 'php-fixture-gen/typed-props.php');
const PROPS = [
  'int',
  'float',
  'string',
  'bool',
  'array',
  'nullableInt',
  'nullableFloat',
  'mixed',
  'untyped',
  'intOrFloat',
  'intOrString',
  'object',
  'options',
] as const;
type Prop = (typeof PROPS)[number];
const PATHS = ['cli', 'library'] as const;
type Path = (typeof PATHS)[number];

/** Accepted: what PHP holds, `get_debug_type() json_encode()`. Refused: the message's tail, or the whole message. */
type Outcome = string | { refused: string } | { message: string };
type Expect = Outcome | { cli: Outcome; library: Outcome };

interface Row {
  label: string;
  /** The JSON text, as written in --props (its spelling matters: `1.0`). */
  json: string;
  expect: Record<Prop, Expect>;
}

/** A row: the types listed accept the value; every other refuses it, described as `what`. */
function row(
  label: string,
  json: string,
  what: string | { cli: string; library: string } | null,
  accepted: Partial<Record<Prop, Expect>>,
): Row {
  const refusal = (w: string | null): Outcome => (w === null ? { refused: 'null' } : { refused: w });
  const refused: Expect =
    what !== null && typeof what === 'object' ? { cli: refusal(what.cli), library: refusal(what.library) } : refusal(what);
  return { label, json, expect: Object.fromEntries(PROPS.map((p) => [p, accepted[p] ?? refused])) as Record<Prop, Expect> };
}

const both = (value: Expect): Partial<Record<Prop, Expect>> => ({ mixed: value, untyped: value });

const TABLE: Row[] = [
  row('an int', '7', 'the int 7', {
    int: 'int 7',
    float: 'float 7.0',
    nullableInt: 'int 7',
    nullableFloat: 'float 7.0',
    ...both('int 7'),
    intOrFloat: 'int 7',
    intOrString: 'int 7',
  }),
  row('a negative int', '-7', 'the int -7', {
    int: 'int -7',
    float: 'float -7.0',
    nullableInt: 'int -7',
    nullableFloat: 'float -7.0',
    ...both('int -7'),
    intOrFloat: 'int -7',
    intOrString: 'int -7',
  }),
  (() => {
    // JSON.parse rounds it to 2^53 before the library sees it; the CLI keeps every digit.
    const int = { cli: 'int 9007199254740993', library: 'int 9007199254740992' };
    return row(
      'an int past 2^53',
      '9007199254740993',
      { cli: 'the int 9007199254740993', library: 'the int 9007199254740992' },
      {
        int,
        float: 'float 9007199254740992.0',
        nullableInt: int,
        nullableFloat: 'float 9007199254740992.0',
        ...both(int),
        intOrFloat: int,
        intOrString: int,
      },
    );
  })(),
  row('an int past int64 (a float to json_decode)', '10000000000000000000', 'the float 1.0E+19', {
    float: 'float 1.0e+19',
    nullableFloat: 'float 1.0e+19',
    ...both('float 1.0e+19'),
    intOrFloat: 'float 1.0e+19',
  }),
  row('a non-integral number', '1.5', 'the float 1.5', {
    float: 'float 1.5',
    nullableFloat: 'float 1.5',
    ...both('float 1.5'),
    intOrFloat: 'float 1.5',
  }),
  row(
    'a whole number written 1.0',
    '1.0',
    { cli: 'the float 1.0', library: 'the int 1' },
    {
      int: 'int 1',
      float: 'float 1.0',
      nullableInt: 'int 1',
      nullableFloat: 'float 1.0',
      ...both({ cli: 'float 1.0', library: 'int 1' }),
      intOrFloat: { cli: 'float 1.0', library: 'int 1' },
      intOrString: 'int 1',
    },
  ),
  row(
    'a whole number written 1e3',
    '1e3',
    { cli: 'the float 1000.0', library: 'the int 1000' },
    {
      int: 'int 1000',
      float: 'float 1000.0',
      nullableInt: 'int 1000',
      nullableFloat: 'float 1000.0',
      ...both({ cli: 'float 1000.0', library: 'int 1000' }),
      intOrFloat: { cli: 'float 1000.0', library: 'int 1000' },
      intOrString: 'int 1000',
    },
  ),
  row('a string', '"abc"', 'the string "abc"', { string: 'string "abc"', ...both('string "abc"'), intOrString: 'string "abc"' }),
  row('a numeric string', '"42"', 'the string "42"', { string: 'string "42"', ...both('string "42"'), intOrString: 'string "42"' }),
  row('a bool', 'true', 'a boolean', { bool: 'bool true', ...both('bool true') }),
  row('null', 'null', null, { nullableInt: 'null null', nullableFloat: 'null null', ...both('null null') }),
  row('a list', '[1,2.5]', 'an array', { array: 'array [1,2.5]', ...both('array [1,2.5]') }),
  row('an empty list', '[]', 'an array', { array: 'array []', ...both('array []') }),
  row('an object', '{"level":2}', 'an object', {
    array: 'array {"level":2}',
    ...both('array {"level":2}'),
    object: 'stdClass {"level":2}',
    options: 'App\\Jobs\\TypedOptions {"level":2,"label":null}',
  }),
  row('an object with an integer-like key', '{"1":"a"}', 'an object', {
    array: 'array {"1":"a"}',
    ...both('array {"1":"a"}'),
    object: 'stdClass {"1":"a"}',
    options: { message: 'App\\Jobs\\TypedOptions has no property $1 that it serializes' },
  }),
  row('an empty object', '{}', 'an object', {
    array: 'array []',
    ...both('array []'),
    object: 'stdClass {}',
    options: 'App\\Jobs\\TypedOptions {"level":0,"label":null}',
  }),
];

const prefix = uniquePrefix('typed-values');
const s: Scratch = scratch(prefix, 'typed');
let shapesFile: string;
let shapes: ShapesFile;
let queue: LaravelQueue;

const outcome = (e: Expect, path: Path): Outcome => (typeof e === 'object' && 'cli' in e ? e[path] : e);
const isAccepted = (o: Outcome): o is string => typeof o === 'string';

/** The one line a refusal says: the class, the property, its type (as PHP prints it) and the value. */
function refusalMessage(prop: Prop, o: Exclude<Outcome, string>): string {
  if ('message' in o) return o.message;
  const type = shapes.classes[CLASS]!.properties.find((p) => p.name === prop)!.type;
  const where = `${CLASS}::$${prop}`;
  return o.refused === 'null' ? `${where} is ${type}, not nullable: it cannot be null` : `${where} is ${type}; ${o.refused} is not`;
}

/** The --props text: each property given the row's JSON as written. */
const propsJson = (props: Prop[], json: string) => `{${props.map((p) => `${JSON.stringify(p)}:${json}`).join(',')}}`;

/** Runs tasks at most `limit` at a time (the machine is shared). */
async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]!();
      }
    }),
  );
  return results;
}

interface Ran {
  /** What PHP holds in each accepted property, per row and way in (`ERROR …` when PHP refused it). */
  held: Map<string, string>;
  /** What each refused cell said: the error thrown, `Name: message`, or `pushed`. */
  said: Map<string, string>;
  /** Per row and way in: the dispatch of the accepted properties, when it failed. */
  failed: Map<string, string>;
  /** Jobs found on the queue refused cells were sent to. */
  refusedPushed: number;
}
const key = (rowIndex: number, path: Path, prop?: Prop) => `${rowIndex}/${path}${prop ? `/${prop}` : ''}`;
let ran: Ran;

beforeAll(async () => {
  shapesFile = join(s.dir, 'typed-shapes.json');
  const made = await lqb(['shapes', `--bootstrap=${FIXTURE}`, `--out=${shapesFile}`], s.env);
  expect(made.status, made.stderr).toBe(0);
  shapes = readShapes(shapesFile);
  queue = await connect({ redis: REDIS_URL, prefix });
  ran = { held: new Map(), said: new Map(), failed: new Map(), refusedPushed: 0 };
  const cli = (props: string, queueName: string) =>
    lqb(['dispatch', CLASS, `--props=${props}`, `--shapes=${shapesFile}`, `--queue=${queueName}`], s.env);
  // `lqb dispatch`'s command, its flags parsed by its own table as main() parses them.
  const cliInProcess = async (props: string): Promise<string> => {
    const args = [CLASS, `--props=${props}`, `--shapes=${shapesFile}`, '--queue=refused', `--redis=${REDIS_URL}`, `--prefix=${prefix}`];
    const { values, positionals } = parseArgs({
      args,
      options: parserOptions(dispatchCommand.options),
      allowPositionals: true,
      strict: true,
    });
    return dispatchCommand.run({ values, positionals, out: () => undefined }).then(
      () => 'pushed',
      (error: Error) => `${error instanceof UsageError ? 'UsageError' : error.name}: ${error.message}`,
    );
  };

  const tasks: (() => Promise<void>)[] = [];
  TABLE.forEach((r, i) => {
    for (const path of PATHS) {
      const accepted = PROPS.filter((p) => isAccepted(outcome(r.expect[p], path)));
      const refused = PROPS.filter((p) => !isAccepted(outcome(r.expect[p], path)));
      // The accepted properties in one job, on a queue of its own.
      if (accepted.length > 0) {
        tasks.push(async () => {
          if (path === 'cli') {
            const result: RunResult = await cli(propsJson(accepted, r.json), `row${i}-cli`);
            if (result.status !== 0) ran.failed.set(key(i, path), result.stderr.trim());
          } else {
            const value = JSON.parse(r.json) as unknown;
            await queue
              .dispatch(CLASS, Object.fromEntries(accepted.map((p) => [p, value])), { shapes, queue: `row${i}-library` })
              .catch((error: Error) => ran.failed.set(key(i, path), error.message));
          }
        });
      }
      for (const prop of refused) {
        tasks.push(async () => {
          if (path === 'cli') {
            ran.said.set(key(i, path, prop), await cliInProcess(propsJson([prop], r.json)));
          } else {
            const error = await queue.dispatch(CLASS, { [prop]: JSON.parse(r.json) as unknown }, { shapes, queue: 'refused' }).then(
              () => undefined,
              (caught: Error) => caught,
            );
            ran.said.set(key(i, path, prop), error ? `${error.name}: ${error.message}` : 'pushed');
          }
        });
      }
    }
  });
  await pool(tasks, 3);

  // What PHP reads back from each pushed command, property by property.
  const raw = rawClient();
  const asks: { k: string; command: string; property: Prop }[] = [];
  for (const [i, r] of TABLE.entries()) {
    for (const path of PATHS) {
      const [payload] = await raw.lrange(`${prefix}queues:row${i}-${path}`, 0, -1);
      if (payload === undefined) continue;
      const command = (JSON.parse(payload) as { data: { command: string } }).data.command;
      for (const prop of PROPS)
        if (isAccepted(outcome(r.expect[prop], path))) asks.push({ k: key(i, path, prop), command, property: prop });
    }
  }
  ran.refusedPushed = await raw.llen(`${prefix}queues:refused`);
  raw.disconnect();
  const lines = execFileSync('php', [FIXTURE, '--read'], {
    input: asks.map(({ command, property }) => JSON.stringify({ command, property })).join('\n') + '\n',
    encoding: 'utf8',
  }).split('\n');
  asks.forEach((ask, n) => ran.held.set(ask.k, lines[n]!));
}, 240_000);

afterAll(() => dropQueue(queue, prefix, s));

describe('every JSON value against every declared type, through lqb dispatch and connect().dispatch()', () => {
  TABLE.forEach((r, i) => {
    it(`${r.label} (${r.json})`, () => {
      for (const path of PATHS) {
        expect(ran.failed.get(key(i, path)), `${r.json} via ${path}: the accepted properties were not pushed`).toBeUndefined();
        for (const prop of PROPS) {
          const o = outcome(r.expect[prop], path);
          const cell = `${r.json} into $${prop} via ${path}`;
          if (isAccepted(o)) {
            expect(ran.held.get(key(i, path, prop)), `${cell}: what PHP holds after unserialize()`).toBe(o);
            continue;
          }
          // The CLI says a refusal as a usage error (status 2), in the library's words.
          expect(ran.said.get(key(i, path, prop)), `${cell}: the refusal`).toBe(
            `${path === 'cli' ? 'UsageError' : 'ShapeError'}: ${refusalMessage(prop, o)}`,
          );
        }
      }
    });
  });

  it('nothing refused was pushed', () => {
    expect(ran.refusedPushed, 'jobs on the queue the refused cells were sent to').toBe(0);
  });
});
