/**
 * `lqb horizon:snapshot`: what `php artisan horizon:snapshot` does (a metrics snapshot, under
 * Horizon's lock, so a PHP scheduler and this never take one twice), and what Horizon's master
 * does as it loops (trimming its job lists), for a fleet of Node workers with no PHP master.
 * Run it as often as the app would schedule horizon:snapshot (every five minutes).
 */
import { horizonPrefix, horizonSnapshot, trimHorizon, type HorizonTrim } from '../horizon/index.js';
import { resolveHorizon, type ResolvedHorizon } from '../connect/horizon.js';
import { connectionFlags, connectionFrom, readEnvFile, withHorizonClient } from './connection.js';
import { UsageError, type Command, type CommandContext, type Options } from './command.js';

/** How Horizon's prefix is found: shared by every command that writes Horizon's records. */
export const horizonFlags = {
  'horizon-prefix': {
    type: 'string',
    value: 'P',
    description: "Horizon's key prefix (its config's horizon.prefix)",
    env: 'HORIZON_PREFIX',
    default: "APP_NAME's slug, then _horizon:",
  },
} satisfies Options;

const TRIMS: [flag: string, setting: keyof HorizonTrim][] = [
  ['trim-recent', 'recent'],
  ['trim-pending', 'pending'],
  ['trim-completed', 'completed'],
  ['trim-recent-failed', 'recent_failed'],
  ['trim-failed', 'failed'],
  ['trim-monitored', 'monitored'],
];

/** Horizon's trim settings as flags: how long the records written live (and what horizon:snapshot trims). */
export const trimFlags = Object.fromEntries(
  TRIMS.map(([flag, setting]) => [
    flag,
    {
      type: 'string',
      value: 'MINUTES',
      description: `horizon.trim.${setting}: minutes its jobs stay listed`,
      default: setting.endsWith('failed') || setting === 'monitored' ? '10080' : '60',
    },
  ]),
) as Options;

/** The prefix from --horizon-prefix, else HORIZON_PREFIX, else APP_NAME (the process's environment, then --env's file). */
export function horizonPrefixFrom(values: CommandContext['values']): string {
  const fromFile = typeof values.env === 'string' ? readEnvFile(values.env) : undefined;
  return horizonPrefix({
    prefix: typeof values['horizon-prefix'] === 'string' ? values['horizon-prefix'] : undefined,
    env: (name) => process.env[name] ?? fromFile?.[name],
  });
}

/**
 * `--horizon` and friends, for the commands that write Horizon's records as they go (work,
 * dispatch): on with --horizon, off with --no-horizon, else on when --env's app has Horizon 5.
 */
export const recordFlags = {
  horizon: {
    type: 'boolean',
    description:
      "write Laravel Horizon's records of every job, as Horizon's own queue does, so its dashboard shows Node's work (docs/horizon.md); on by itself when --env's app has laravel/horizon 5 installed",
  },
  'no-horizon': { type: 'boolean', description: "write no Horizon records, even when --env's app has Horizon" },
  ...horizonFlags,
  ...trimFlags,
} satisfies Options;

/** Whether the command writes Horizon's records, and where; undefined when it does not. */
export function horizonFrom(values: CommandContext['values']): ResolvedHorizon | undefined {
  if (values.horizon === true && values['no-horizon'] === true)
    throw new UsageError('--horizon and --no-horizon say opposite things: give one');
  if (values['no-horizon'] === true) return undefined;
  const envPath = typeof values.env === 'string' ? values.env : undefined;
  const found = resolveHorizon(values.horizon === true ? true : undefined, {
    ...(envPath !== undefined ? { envPath, fromFile: readEnvFile(envPath) } : {}),
  });
  return found && { ...found, prefix: horizonPrefixFrom(values), trim: trimFrom(values) };
}

function trimFrom(values: CommandContext['values']): Partial<HorizonTrim> {
  const trim: Partial<HorizonTrim> = {};
  for (const [flag, setting] of TRIMS) {
    const given = values[flag];
    if (typeof given !== 'string') continue;
    const minutes = Number(given);
    if (!Number.isInteger(minutes) || minutes < 0) throw new UsageError(`--${flag} takes whole minutes, not "${given}"`);
    trim[setting] = minutes;
  }
  return trim;
}

export const horizonSnapshotCommand: Command = {
  synopsis: 'lqb horizon:snapshot',
  summary:
    "Stores a snapshot of Horizon's queue and job metrics, as php artisan horizon:snapshot does (skipped while another snapshot holds Horizon's lock), then trims Horizon's job lists as its master does: for Node workers without a PHP Horizon.",
  options: { ...horizonFlags, ...trimFlags, ...connectionFlags },
  noArguments: true,
  async run({ values, out }) {
    const connection = connectionFrom(values);
    const prefix = horizonPrefixFrom(values);
    const trim = trimFrom(values);
    await withHorizonClient(connection, async (client) => {
      if (await horizonSnapshot(client, { prefix })) out('Metrics snapshot stored successfully.');
      else out('Metrics snapshot skipped: another snapshot was taken within the lock.');
      const removed = await trimHorizon(client, { prefix, trim });
      out(`Trimmed ${removed} old ${removed === 1 ? 'entry' : 'entries'} from Horizon's job lists.`);
    });
  },
};
