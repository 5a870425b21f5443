/**
 * `lqb fixtures CLASS --app=DIR --props=JSON [--out=FILE] [--queue=Q]`: the payloads the app's own
 * PHP makes for a dispatch of CLASS with these properties (src/fixtures/fixtures.php): its classes,
 * its Eloquent models as ModelIdentifier (a model given as {"@model": CLASS, "id": ID}, made
 * without a database), its encryption, its Laravel's payload layout for the connection's driver.
 * One JSON line a payload, {"class","queue","payload"}, for a Node test (runJob) to run on bytes
 * PHP really writes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDotenv } from '../connect/dotenv.js';
import { appFixtures } from '../fixtures/index.js';
import { connectionFlags, connectionFrom, type Connection } from './connection.js';
import { UsageError, stringFlag, type Command } from './command.js';

export const fixtures: Command = {
  synopsis: 'lqb fixtures CLASS',
  summary:
    'Prints the payloads the app\'s own PHP makes for a dispatch of CLASS with these properties, one JSON line each: {"class","queue","payload","middleware"} (nothing is pushed).',
  options: {
    app: {
      type: 'string',
      value: 'DIR',
      required: true,
      description:
        'the Laravel app: its bootstrap/app.php is booted (else its vendor/autoload.php loaded), and its classes make the payload',
    },
    props: {
      type: 'string',
      value: 'JSON',
      required: true,
      description:
        'the properties by name, as lqb dispatch --props takes them (a model as {"@model":"App\\\\Models\\\\User","id":3}); a JSON list of such objects makes a payload each',
    },
    out: { type: 'string', value: 'FILE', description: 'where the lines go', default: 'standard output' },
    queue: { type: 'string', value: 'Q', description: 'onQueue(): the queue it is dispatched to', default: "the class's own" },
    ...connectionFlags,
  },
  async run({ values, positionals, out }) {
    const [className, ...extra] = positionals;
    if (!className || extra.length > 0) throw new UsageError('fixtures takes one CLASS, e.g. App\\Jobs\\SendInvoice');
    const app = stringFlag(values.app, 'app');
    if (app === undefined) throw new UsageError('fixtures needs --app=DIR: the Laravel app whose PHP makes the payload');
    const propsText = stringFlag(values.props, 'props');
    if (propsText === undefined) throw new UsageError('fixtures needs --props=JSON: the properties, by name');
    let props: unknown;
    try {
      props = JSON.parse(propsText);
    } catch (error) {
      throw new UsageError(`--props is not JSON: ${(error as Error).message}`);
    }
    if (props === null || typeof props !== 'object') throw new UsageError('--props must be an object of properties, or a list of them');
    const connection = connectionFrom(values);
    const queue = stringFlag(values.queue, 'queue');
    const made = await appFixtures({
      app,
      className,
      props: props as Record<string, unknown>,
      driver: connection.queueConnection,
      ...(queue !== undefined ? { queue } : {}),
      ...appKeyOf(connection, app),
    });
    const lines = made.map((fixture) => JSON.stringify(fixture));
    const file = stringFlag(values.out, 'out');
    if (file === undefined) for (const line of lines) out(line);
    else {
      await writeFile(file, lines.map((line) => `${line}\n`).join(''));
      process.stderr.write(`lqb fixtures: ${lines.length} payload${lines.length === 1 ? '' : 's'} of ${className} written to ${file}\n`);
    }
    return 0;
  },
};

/**
 * The key a ShouldBeEncrypted class is encrypted with: the one given (--key, APP_KEY, --env),
 * else the app's own .env's, as its dispatch() would use; none when neither has one.
 */
function appKeyOf(connection: Connection, app: string): { key?: string; cipher?: string } {
  if (connection.appKey) return { key: connection.appKey, cipher: connection.cipher };
  const file = join(app, '.env');
  if (!existsSync(file)) return {};
  const env = parseDotenv(readFileSync(file, 'utf8'), {});
  return env.APP_KEY ? { key: env.APP_KEY, cipher: env.APP_CIPHER || 'AES-256-CBC' } : {};
}
