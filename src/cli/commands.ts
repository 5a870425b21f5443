/**
 * Every `lqb` command by name, in the order `lqb --help` lists them. Kept apart from main.ts,
 * which runs the command line when loaded, so that the docs and tests can read the tables.
 */
import type { Command } from './command.js';
import { decode } from './decode.js';
import { find } from './find.js';
import { dispatch } from './dispatch.js';
import { failed, flush, forget, retry } from './failed.js';
import { clear, restart, size } from './queues.js';
import { pause, resume } from './pause.js';
import { work } from './work.js';
import { demo } from './demo.js';
import { shapes } from './shapes.js';
import { horizonSnapshotCommand } from './horizon.js';
import { cancel } from './cancel.js';
import { ui } from './ui.js';

export const commands: Record<string, Command> = {
  work,
  dispatch,
  decode,
  find,
  size,
  clear,
  restart,
  pause,
  resume,
  failed,
  retry,
  forget,
  flush,
  cancel,
  ui,
  shapes,
  'horizon:snapshot': horizonSnapshotCommand,
  demo,
};
