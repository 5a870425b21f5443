/**
 * Every `lqb` command by name, all loaded, in the order `lqb --help` lists them: for the docs and
 * tests that read the tables. The command line loads only the one it runs (registry.ts).
 */
import { loadCommands } from './registry.js';

export const commands = await loadCommands();
