/**
 * Every `lqb` command by name, in the order `lqb --help` lists them, each loaded when asked for:
 * a command's module brings in what it runs (Redis, the worker, Horizon, the dashboard), and
 * `lqb --version` or `lqb work` should pay for nothing another command needs.
 */
import type { Command } from './command.js';

const loaders: Record<string, () => Promise<Command>> = {
  work: async () => (await import('./work.js')).work,
  dispatch: async () => (await import('./dispatch.js')).dispatch,
  decode: async () => (await import('./decode.js')).decode,
  find: async () => (await import('./find.js')).find,
  size: async () => (await import('./queues.js')).size,
  clear: async () => (await import('./queues.js')).clear,
  restart: async () => (await import('./queues.js')).restart,
  pause: async () => (await import('./pause.js')).pause,
  resume: async () => (await import('./pause.js')).resume,
  failed: async () => (await import('./failed.js')).failed,
  retry: async () => (await import('./failed.js')).retry,
  forget: async () => (await import('./failed.js')).forget,
  flush: async () => (await import('./failed.js')).flush,
  cancel: async () => (await import('./cancel.js')).cancel,
  fixtures: async () => (await import('./fixtures.js')).fixtures,
  check: async () => (await import('./check.js')).check,
  port: async () => (await import('./port.js')).port,
  record: async () => (await import('./record.js')).record,
  ui: async () => (await import('./ui.js')).ui,
  shapes: async () => (await import('./shapes.js')).shapes,
  'horizon:snapshot': async () => (await import('./horizon.js')).horizonSnapshotCommand,
  demo: async () => (await import('./demo.js')).demo,
};

/** The commands' names, in --help's order. */
export const commandNames: readonly string[] = Object.keys(loaders);

/** The command of that name, its module loaded now; undefined for no such command. */
export function loadCommand(name: string): Promise<Command> | undefined {
  return Object.hasOwn(loaders, name) ? loaders[name]!() : undefined;
}

/** Every command (for --help's overview, the docs and the tests), in --help's order. */
export async function loadCommands(): Promise<Record<string, Command>> {
  const loaded = await Promise.all(commandNames.map((name) => loadCommand(name)!));
  return Object.fromEntries(commandNames.map((name, i) => [name, loaded[i]!]));
}
