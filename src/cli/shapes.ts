/**
 * `lqb shapes (--app=DIR | --bootstrap=FILE.php) [--class=A,B] [--out=FILE] [--types=FILE.d.ts]`:
 * reads the app's queueable classes with PHP's own reflection and writes their shapes (JSON,
 * `lqb-shapes.json` by default) and, with --types, TypeScript declarations for typed handlers.
 * Prints one line: how many classes of each kind, and where they were written.
 */
import { writeFile } from 'node:fs/promises';
import { declarationsFor, reflectShapes, type ClassKind, type ShapesFile } from '../shapes/index.js';
import { UsageError, stringFlag, type Command } from './command.js';

const KINDS: ClassKind[] = ['job', 'listener', 'notification', 'mailable', 'event', 'model', 'class'];

export const shapes: Command = {
  synopsis: 'lqb shapes (--app=DIR | --bootstrap=FILE.php)',
  summary:
    "Reads the app's queueable classes with PHP's own reflection (php on PATH) and writes their shapes, and with --types TypeScript declarations for typed handlers.",
  options: {
    app: {
      type: 'string',
      value: 'DIR',
      inSynopsis: true,
      description: 'a Laravel app: its vendor/autoload.php is loaded and the classes under app/ read',
    },
    bootstrap: {
      type: 'string',
      value: 'FILE.php',
      inSynopsis: true,
      description: 'a PHP file of your own to require instead; every ShouldQueue class it declares or loads counts',
    },
    class: { type: 'string', value: 'A,B', description: 'read only these classes' },
    out: { type: 'string', value: 'FILE', description: 'the shapes file to write', default: 'lqb-shapes.json' },
    types: { type: 'string', value: 'FILE.d.ts', description: 'also write TypeScript declarations exporting interface Jobs' },
  },
  noArguments: true,
  async run({ values, out }) {
    const app = stringFlag(values.app, 'app');
    const bootstrap = stringFlag(values.bootstrap, 'bootstrap');
    if ((app === undefined) === (bootstrap === undefined))
      throw new UsageError('give one of --app=DIR (a Laravel app) or --bootstrap=FILE.php');
    const classFlag = stringFlag(values.class, 'class');
    const classes = classFlag
      ?.split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    if (classFlag !== undefined && classes!.length === 0) throw new UsageError('--class names no class');
    const file = stringFlag(values.out, 'out') ?? 'lqb-shapes.json';
    const types = stringFlag(values.types, 'types');
    const read = await reflectShapes({ ...(app !== undefined ? { app } : { bootstrap: bootstrap! }), ...(classes ? { classes } : {}) });
    await writeFile(file, JSON.stringify(read, null, 2) + '\n');
    // Read what could be read; name each class that could not, once, on stderr.
    for (const { class: name, reason } of read.unreadable ?? []) process.stderr.write(`lqb shapes: cannot read ${name}: ${reason}\n`);
    if (types !== undefined) await writeFile(types, declarationsFor(read));
    const counts = new Map<ClassKind, number>();
    for (const shape of Object.values(read.classes)) counts.set(shape.kind, (counts.get(shape.kind) ?? 0) + 1);
    const summary = KINDS.filter((kind) => counts.has(kind)).map((kind) => `${counts.get(kind)} ${plural(kind, counts.get(kind)!)}`);
    out(
      `${summary.length ? summary.join(', ') : 'no queueable classes'} (Laravel ${read.laravel ?? 'unknown'}) written to ${file}${types !== undefined ? ` and ${types}` : ''}`,
    );
    for (const line of untranslatedLines(read)) out(line);
  },
};

/** One line per method Node will need and `lqb shapes` could not translate, and what to do about it. */
function untranslatedLines(read: ShapesFile): string[] {
  const lines: string[] = [];
  for (const shape of Object.values(read.classes)) {
    for (const [method, expression] of Object.entries(shape.expressions ?? {})) {
      if (expression && 'untranslated' in expression)
        lines.push(
          `untranslated: ${shape.name}::${method}() (${expression.untranslated}): give its handler, or dispatch, a ${method}(job) function`,
        );
    }
  }
  return lines;
}

const plural = (kind: ClassKind, n: number) => (n === 1 ? kind : kind === 'class' ? 'classes' : `${kind}s`);
