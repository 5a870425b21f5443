/**
 * Instructions a process has run, counted by Valgrind's callgrind: a measure of a code's cost
 * that a machine's noise does not move (a neighbour's load, a boost clock, a host's other
 * guests), where CPU time on this VM moves by a third from run to run. A bench runs its child
 * under `valgrind --tool=callgrind` (underValgrind) and the child reads its own counts
 * (instructionsSoFar) around what it times; callgrind_control asks the running process through
 * Valgrind's gdbserver, which answers even while the process waits in a system call. Counting
 * is off until the child turns it on (countFromNow) and off again when it is done (stopCounting):
 * a warm-up uncounted runs some 10 times faster, so V8 can be given the tens of thousands of jobs
 * its optimizing compiler takes.
 *
 * Under Valgrind a process runs some 50 times slower, so Redis never holds it back: what the
 * counts compare is the code's own work, not how a worker waits for a busy Redis.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Set in the child's environment by underValgrind. */
const MARK = 'LQB_BENCH_CALLGRIND';

/** Instructions so far: the process's (every thread) and its main thread's. */
export interface Instructions {
  all: number;
  main: number;
}

/** The command and arguments that run `node args…` under callgrind, and the environment that tells the child so. */
export function underValgrind(args: string[], env: NodeJS.ProcessEnv): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  return {
    command: 'valgrind',
    // Quiet (its summary would mix with the child's output); no cache or branch simulation: only
    // the instruction count is read, at the least cost.
    args: [
      '-q',
      '--tool=callgrind',
      '--cache-sim=no',
      '--branch-sim=no',
      '--instr-atstart=no',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      ...args,
    ],
    env: { ...env, [MARK]: '1' },
  };
}

/** What a process not run under underValgrind counts: nothing, so every figure made of it is NaN. */
export const uncounted: Instructions = { all: Number.NaN, main: Number.NaN };

/** Whether this process runs under underValgrind. */
function countingInstructions(): boolean {
  return process.env[MARK] === '1';
}

/** Counting on, and the instructions counted so far (those of earlier counted stretches); `uncounted` when not under Valgrind. */
export async function countFromNow(): Promise<Instructions> {
  if (!countingInstructions()) return uncounted;
  await run('callgrind_control', ['-i', 'on', String(process.pid)]);
  return instructionsSoFar();
}

/** The instructions counted so far, counting then off; `uncounted` when not under Valgrind. */
export async function stopCounting(): Promise<Instructions> {
  if (!countingInstructions()) return uncounted;
  const counted = await instructionsSoFar();
  await run('callgrind_control', ['-i', 'off', String(process.pid)]);
  return counted;
}

/**
 * This process's instructions counted so far, per callgrind_control's totals (a row per thread,
 * thread 1 the main one). Once, just after counting was switched on, callgrind_control answered
 * without the totals (bench/horizon-calls.ts, 2026-12-04): it is asked again, a few times, before
 * the count is given up.
 */
async function instructionsSoFar(): Promise<Instructions> {
  for (let attempt = 1; ; attempt++) {
    const { stdout } = await run('callgrind_control', ['-e', 'Ir', String(process.pid)]);
    let all = 0;
    let main = 0;
    for (const [, thread, count] of stdout.matchAll(/^\s*Th (\d+)\s+([\d,]+)\s*$/gm)) {
      const n = Number(count!.replaceAll(',', ''));
      all += n;
      if (thread === '1') main = n;
    }
    if (all > 0) return { all, main };
    if (attempt === 5)
      throw new Error(`callgrind_control gave no counts for pid ${process.pid} in ${attempt} asks: ${stdout.trim().split('\n')[0] ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
