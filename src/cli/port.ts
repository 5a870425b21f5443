/**
 * `lqb port CLASS --app=DIR [--out=DIR]`: writes, for one job or queued-listener class of the
 * app, NAME.ts (a handler module typed by the class's shape, with its failed() hook and a stand-in for each method PHP
 * computes that lqb shapes could not translate), NAME.jobs.d.ts (the declarations it is typed by)
 * and NAME.test.ts (runJob on a payload the app's own PHP made from sample values of the shape's
 * types, src/fixtures/). Prints the files and the PHP line that gives the class a queue of its own.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { appFixtures } from '../fixtures/index.js';
import { portClass, sampleProps } from '../port/index.js';
import { reflectShapes } from '../shapes/reflect.js';
import { UsageError, stringFlag, type Command } from './command.js';

export const port: Command = {
  synopsis: 'lqb port CLASS',
  summary:
    "Writes a TypeScript handler module for one job or queued-listener class of the app (typed by its shape, with its failed() hook), its declarations, and a test that runs it with runJob on a payload the app's PHP made; prints the PHP line that gives the class a queue of its own.",
  options: {
    app: {
      type: 'string',
      value: 'DIR',
      required: true,
      description: 'the Laravel app the class is in (its PHP reads the class and makes the payload)',
    },
    out: { type: 'string', value: 'DIR', description: 'where the files go', default: 'the current folder' },
  },
  async run({ values, positionals, out }) {
    const [className, ...extra] = positionals;
    if (!className || extra.length > 0) throw new UsageError('port takes one CLASS, e.g. App\\Jobs\\SendInvoice');
    const app = stringFlag(values.app, 'app');
    if (app === undefined) throw new UsageError('port needs --app=DIR: the Laravel app the class is in');
    const dir = stringFlag(values.out, 'out') ?? '.';
    const shapes = await reflectShapes({ app, classes: [className] });
    const shape = shapes.classes[className];
    if (!shape)
      throw new Error(`${className}: the app has no such class (PHP read ${Object.keys(shapes.classes).length} classes under ${app})`);
    if (shape.kind !== 'job' && shape.kind !== 'listener')
      throw new Error(`${className} is a ${shape.kind}: lqb port writes job and queued-listener classes`);
    if (shape.kind === 'listener' && !(shape.handles ?? []).some((handled) => handled.event !== null && shapes.classes[handled.event]))
      throw new Error(`${className}: PHP read no event class its handle() takes, to make its payload from`);
    const props = sampleProps(shape, shapes);
    const [made] = await appFixtures({ app, className, props });
    if (!made) throw new Error(`${className}: the app's PHP made no payload`);
    const command = `lqb fixtures '${className}' --app=${app} --props='${JSON.stringify(props)}'`;
    const ported = portClass(shape, shapes, made.payload, command, made.middleware ?? []);
    await mkdir(dir, { recursive: true });
    for (const [name, text] of Object.entries(ported.files)) {
      await writeFile(join(dir, name), text);
      out(`wrote ${join(dir, name)}`);
    }
    out(ported.phpLine);
    return 0;
  },
};
