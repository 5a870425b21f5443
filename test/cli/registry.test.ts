/**
 * `lqb` loads only the command it runs: `lqb --version` none, `lqb work` none of the other
 * commands' modules (the dashboard, Horizon's snapshot, the shapes reader's command). What node
 * loaded is read from a loader hook's list (test/helpers/module-trace.mjs), not from a clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lqb } from '../helpers/processes.js';
import { root } from '../helpers/php.js';
import { moduleTrace, modulesLoaded } from '../helpers/bundle.js';
import { commandNames, loadCommand } from '../../src/cli/registry.js';
import { commands } from '../../src/cli/commands.js';

const scratch = mkdtempSync(join(tmpdir(), 'lqb-registry-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The package's modules (as dist/… paths, those bundled into a loaded file included) and dependencies (as their names) node loaded for `lqb ARGS`. */
async function loadedBy(args: string[]): Promise<{ status: number | null; modules: string[] }> {
  const trace = join(scratch, `${args.join('_').replace(/\W/g, '')}.txt`);
  const { nodeFlags, env, lines } = moduleTrace(trace);
  const ran = await lqb(args, env, { nodeFlags });
  return { status: ran.status, modules: modulesLoaded(lines(), root) };
}

describe('lqb loads what the command it runs needs', () => {
  it('lqb --version loads no command and no dependency', async () => {
    const { status, modules } = await loadedBy(['--version']);
    expect(status, 'lqb --version exit status').toBe(0);
    expect(
      modules.filter(
        (module) => !module.startsWith('dist/') || /^dist\/(worker|redis|database|horizon|ui|shapes|connect\/connect)/.test(module),
      ),
      'modules lqb --version loaded beyond the command line itself',
    ).toEqual([]);
  });

  it('lqb work --help loads no other command, and not the dashboard', async () => {
    const { status, modules } = await loadedBy(['work', '--help']);
    expect(status, 'lqb work --help exit status').toBe(0);
    const others = ['ui', 'cancel', 'decode', 'find', 'dispatch', 'failed', 'pause', 'demo', 'shapes', 'queues'].map(
      (name) => `dist/cli/${name}.js`,
    );
    expect(
      modules.filter((module) => others.includes(module) || module.startsWith('dist/ui/')),
      'modules of other commands lqb work --help loaded',
    ).toEqual([]);
    expect(modules, 'lqb work --help loaded its own command').toContain('dist/cli/work.js');
  });
});

describe('the registry', () => {
  it('names every command once, in --help order, each loading the command of its name', async () => {
    expect(Object.keys(commands), 'commands.ts lists the registry’s commands in its order').toEqual([...commandNames]);
    for (const name of commandNames) {
      const command = await loadCommand(name);
      expect(command, `the registry's loader for ${name}`).toBe(commands[name]);
    }
    expect(loadCommand('bogus'), 'a name that is no command').toBeUndefined();
    expect(loadCommand('constructor'), 'a name on Object.prototype').toBeUndefined();
  });
});
