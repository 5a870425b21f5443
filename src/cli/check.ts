/**
 * `lqb check --handlers=FILE --shapes=FILE [--types=FILE.d.ts] [--project=tsconfig.json]`, for
 * CI: do a team's Node handlers still match the app's classes after a PHP change? One line a
 * mismatch, exit 1; exit 0 and one line when everything matches.
 *
 * - Every handler key names a class of the app (the shapes of the whole app, `lqb shapes --app`),
 *   or one of Laravel's own wrappers.
 * - Every uniqueId(), backoff(), retryUntil(), tags() and displayName() a handled class defines is
 *   translated into the shapes, or given by its handler in JavaScript.
 * - With --types: the declarations today's shapes make are written where the user's code imports
 *   them (the file `lqb shapes --types` wrote), the TypeScript compiler checks the project against
 *   them, and the file is put back as it was. What handlers read and what Node dispatches is then
 *   checked by the compiler, over the user's own code; nothing here reads that code.
 */
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import type { ShapesFile, TranslatedMethod } from '../shapes/shape.js';
import { declarationsFor } from '../shapes/types.js';
import { nearestHandlerKey } from '../worker/handlerKeys.js';
import type { HandlerMap } from '../worker/handlers.js';
import { loadHandlersModule } from './handlers-module.js';
import { shapesFlag, shapesFrom } from './shapes-file.js';
import { UsageError, stringFlag, type Command } from './command.js';

const TRANSLATED: readonly TranslatedMethod[] = ['uniqueId', 'backoff', 'retryUntil', 'tags', 'displayName'];

export const check: Command = {
  synopsis: 'lqb check',
  summary:
    "Checks a handlers module against the app's shapes, for CI: every handler key is a class of the app, every uniqueId()/backoff()/retryUntil()/tags()/displayName() of a handled class is translated or given in JavaScript, and (--types) the project type-checks against today's shapes. One line a mismatch, exit 1.",
  options: {
    handlers: { type: 'string', value: 'FILE', required: true, description: 'the handlers module (.js/.mjs, or .ts with tsx)' },
    shapes: { ...shapesFlag.shapes, required: true, description: 'the shapes of the whole app (lqb shapes --app=DIR)' },
    types: {
      type: 'string',
      value: 'FILE.d.ts',
      description:
        "the declarations file the project imports (lqb shapes --types wrote it): today's shapes' declarations are written there while the TypeScript compiler checks the project, then it is put back",
    },
    project: { type: 'string', value: 'FILE', description: "with --types, the project's tsconfig", default: 'tsconfig.json' },
  },
  noArguments: true,
  async run({ values, out }) {
    const handlersFile = stringFlag(values.handlers, 'handlers');
    const shapes = shapesFrom(values);
    if (handlersFile === undefined || shapes === undefined)
      throw new UsageError('check needs --handlers=FILE and --shapes=FILE (or LQB_SHAPES)');
    const shapesFile = stringFlag(values.shapes, 'shapes') ?? process.env.LQB_SHAPES!;
    const handlers = await loadHandlersModule(handlersFile);
    const mismatches = [...keyMismatches(handlers, shapes, shapesFile), ...methodMismatches(handlers, shapes)];
    const types = stringFlag(values.types, 'types');
    if (types !== undefined) mismatches.push(...typeMismatches(shapes, types, stringFlag(values.project, 'project') ?? 'tsconfig.json'));
    if (mismatches.length > 0) {
      for (const line of mismatches) process.stderr.write(`lqb check: ${line}\n`);
      return 1;
    }
    const keys = Object.keys(handlers).length;
    out(
      `${keys} handler${keys === 1 ? '' : 's'} match the app's ${Object.keys(shapes.classes).length} classes${types !== undefined ? ', and the project type-checks against them' : ''}`,
    );
    return 0;
  },
};

/** The class a handler key names: `Class@method` (a listener), `Class@channel` (a notification), or the class. */
const classOfKey = (key: string) => key.split('@')[0]!;

/** Handler keys that name no class of the app (Laravel's own wrappers, Illuminate\…, are the framework's). */
function keyMismatches(handlers: HandlerMap, shapes: ShapesFile, shapesFile: string): string[] {
  const classes = Object.keys(shapes.classes);
  const lines: string[] = [];
  for (const key of Object.keys(handlers)) {
    const className = classOfKey(key);
    if (Object.hasOwn(shapes.classes, className) || className.startsWith('Illuminate\\')) continue;
    const nearest = nearestHandlerKey(className, classes);
    lines.push(
      `handler key ${JSON.stringify(key)}: the app has no class ${className} (in ${shapesFile})${nearest === undefined ? '' : `; the nearest is ${nearest}`}`,
    );
  }
  return lines;
}

/** A handled class's methods whose results Laravel writes, neither translated nor given by its handler. */
function methodMismatches(handlers: HandlerMap, shapes: ShapesFile): string[] {
  const lines: string[] = [];
  for (const [key, handler] of Object.entries(handlers)) {
    const shape = shapes.classes[classOfKey(key)];
    if (!shape) continue;
    for (const method of TRANSLATED) {
      if (!shape.methods.includes(method)) continue;
      const expression = shape.expressions?.[method];
      const translated = expression !== undefined && !('untranslated' in expression);
      if (translated || typeof (handler as unknown as Record<string, unknown>)[method] === 'function') continue;
      const why = expression && 'untranslated' in expression ? ` (${expression.untranslated})` : '';
      lines.push(
        `${shape.name}::${method}() is PHP that lqb shapes did not translate${why}: give the handler of ${JSON.stringify(key)} a ${method}(job) function`,
      );
    }
  }
  return lines;
}

/** The project's type errors against today's shapes, a line each: `file:line:col: message`. */
function typeMismatches(shapes: ShapesFile, typesFile: string, project: string): string[] {
  const configPath = resolve(project);
  if (!existsSync(configPath)) return [`--project=${project}: no such file (the tsconfig the type check reads)`];
  let ts: typeof import('typescript');
  try {
    ts = createRequire(configPath)('typescript') as typeof import('typescript');
  } catch {
    return [`the type check (--types) needs the project's TypeScript compiler: npm install --save-dev typescript beside ${project}`];
  }
  const before = existsSync(typesFile) ? readFileSync(typesFile) : undefined;
  writeFileSync(typesFile, declarationsFor(shapes));
  try {
    const read = ts.readConfigFile(configPath, (file) => ts.sys.readFile(file));
    if (read.error) return [`${project}: ${ts.flattenDiagnosticMessageText(read.error.messageText, ' ')}`];
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath));
    const program = ts.createProgram({ rootNames: parsed.fileNames, options: { ...parsed.options, noEmit: true } });
    return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
      if (!diagnostic.file || diagnostic.start === undefined) return `TS${diagnostic.code}: ${text}`;
      const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      return `${relative(process.cwd(), diagnostic.file.fileName)}:${line + 1}:${character + 1}: TS${diagnostic.code}: ${text}`;
    });
  } finally {
    if (before === undefined) unlinkSync(typesFile);
    else writeFileSync(typesFile, before);
  }
}
