/**
 * A Node worker on Horizon's dashboard: a master supervisor of its own with one supervisor
 * (its processes on its queues), so that the dashboard lists it, the workload page counts its
 * processes, and Horizon's commands reach it.
 *
 * Horizon's master rewrites its records every second and they expire soon after, so this does
 * the same: one heartbeat a second, one round trip each (see lua/heartbeat.lua), which also
 * takes the commands queued for it. `php artisan horizon:pause`, `horizon:continue` and
 * `horizon:terminate` signal the pid of every master named after the machine's host (SIGUSR2,
 * SIGCONT, SIGTERM): the master here is named as Horizon names its own, so on the same machine
 * those signals reach the Node process, and `listenForSignals` turns them into the worker's
 * pause, continue and stop. What pausing means is the worker's: this only calls it and shows it.
 */
import { hostname } from 'node:os';
import { slug } from '../connect/slug.js';
import { encodeJson, type JsonObject } from '../laravel/json.js';
import { randomId } from '../laravel/builders.js';
import type { RedisClient } from '../redis/scripts.js';
import { runHorizonStep } from './steps.js';

export interface HorizonSupervisorOptions {
  /** Horizon's prefix (see `horizonPrefix`). */
  prefix: string;
  /** The queue connection's name, as the app's config names it. */
  connection?: string;
  /** The queues the worker takes jobs from, in order. */
  queues: readonly string[];
  /** How many jobs it runs at once: its processes, on the workload page. */
  processes: number;
  /** The supervisor's name under its master; `node` by default. */
  name?: string;
  /** The master's name; by default as Horizon's: the host's slug, '-', four random characters. */
  masterName?: string;
  /** The master's environment (Horizon's `--environment`); left out by default, so no PHP supervisor plan is shown under it. */
  environment?: string;
  /** The worker's settings, shown as the supervisor's options (Horizon's SupervisorOptions). */
  settings?: Partial<SupervisorSettings>;
  /** Milliseconds between heartbeats; Horizon's master loops every second. */
  interval?: number;
  /** What the worker does on Horizon's commands. */
  onPause?: () => void;
  onContinue?: () => void;
  /** horizon:terminate (SIGTERM) or a Terminate command: stop after the jobs in hand. */
  onTerminate?: () => void;
  /** A heartbeat that failed (Redis away): the next one tries again. */
  onError?: (error: unknown) => void;
}

/** The settings Horizon shows for a supervisor, with its defaults. */
export interface SupervisorSettings {
  backoff: number | string;
  maxTries: number;
  maxTime: number;
  maxJobs: number;
  memory: number;
  timeout: number;
  sleep: number;
  force: boolean;
  rest: number;
}

const DEFAULT_SETTINGS: SupervisorSettings = {
  backoff: 0,
  maxTries: 0,
  maxTime: 0,
  maxJobs: 0,
  memory: 128,
  timeout: 60,
  sleep: 3,
  force: false,
  rest: 0,
};

/** The supervisor commands Horizon queues (class names of Laravel\Horizon\SupervisorCommands). */
const COMMANDS = 'Laravel\\Horizon\\SupervisorCommands\\';

export class HorizonSupervisor {
  readonly masterName: string;
  readonly name: string;
  status: 'running' | 'paused' = 'running';
  private timer: NodeJS.Timeout | undefined;
  private readonly signals: [NodeJS.Signals, () => void][] = [];

  constructor(
    readonly client: RedisClient,
    private readonly options: HorizonSupervisorOptions,
  ) {
    this.masterName = options.masterName ?? `${masterBasename()}-${randomId(4)}`;
    this.name = `${this.masterName}:${options.name ?? 'node'}`;
  }

  /** Shows the worker on the dashboard now, then every `interval` ms until `stop`. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat().catch((error) => this.options.onError?.(error)), this.options.interval ?? 1000);
    this.timer.unref();
  }

  /** One heartbeat: the records written again, and the commands waiting carried out. */
  async beat(): Promise<void> {
    const p = this.options.prefix;
    const commands = await runHorizonStep<string[]>(
      this.client,
      'lqbHorizonHeartbeat',
      [
        `${p}master:${this.masterName}`,
        `${p}masters`,
        `${p}supervisor:${this.name}`,
        `${p}supervisors`,
        `${p}commands:master:${this.masterName}`,
        `${p}commands:${this.name}`,
      ],
      [
        this.masterName,
        this.name,
        process.pid,
        this.status,
        this.options.environment ?? '',
        encodeJson([this.name]),
        encodeJson({ [`${this.connection}:${this.options.queues.join(',')}`]: this.options.processes }),
        encodeJson(this.supervisorOptions()),
        Math.floor(Date.now() / 1000),
      ],
    );
    for (const command of commands) this.carryOut(command);
  }

  pause(): void {
    this.status = 'paused';
    this.options.onPause?.();
  }

  continue(): void {
    this.status = 'running';
    this.options.onContinue?.();
  }

  terminate(): void {
    this.options.onTerminate?.();
  }

  /** SIGUSR2 pauses, SIGCONT continues, SIGTERM terminates, as for Horizon's own master. */
  listenForSignals(): void {
    const on = (signal: NodeJS.Signals, act: () => void) => {
      process.on(signal, act);
      this.signals.push([signal, act]);
    };
    on('SIGUSR2', () => this.pause());
    on('SIGCONT', () => this.continue());
    on('SIGTERM', () => this.terminate());
  }

  /** Stops the heartbeats and takes the worker off the dashboard. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const [signal, act] of this.signals.splice(0)) process.off(signal, act);
    const p = this.options.prefix;
    await runHorizonStep(
      this.client,
      'lqbHorizonForgetSupervisor',
      [
        `${p}master:${this.masterName}`,
        `${p}masters`,
        `${p}supervisor:${this.name}`,
        `${p}supervisors`,
        `${p}commands:master:${this.masterName}`,
      ],
      [this.masterName, this.name],
    );
  }

  private get connection(): string {
    return this.options.connection ?? 'redis';
  }

  /** A queued command, as Horizon's supervisor carries it out; commands for PHP's process pools (Scale, Balance) do not apply. */
  private carryOut(text: string): void {
    let command: unknown;
    try {
      command = (JSON.parse(text) as { command?: unknown }).command;
    } catch {
      return;
    }
    if (command === `${COMMANDS}Pause`) this.pause();
    else if (command === `${COMMANDS}ContinueWorking`) this.continue();
    else if (command === `${COMMANDS}Terminate` || command === `${COMMANDS}Restart`) this.terminate();
  }

  /** Horizon's SupervisorOptions::toArray, in its order, for this worker. */
  private supervisorOptions(): JsonObject {
    const s = { ...DEFAULT_SETTINGS, ...this.options.settings };
    return {
      balance: 'off',
      connection: this.connection,
      queue: this.options.queues.join(','),
      backoff: s.backoff,
      force: s.force,
      maxProcesses: this.options.processes,
      minProcesses: this.options.processes,
      maxTries: s.maxTries,
      maxTime: s.maxTime,
      maxJobs: s.maxJobs,
      memory: s.memory,
      nice: 0,
      name: this.name,
      workersName: 'default',
      sleep: s.sleep,
      timeout: s.timeout,
      balanceCooldown: 3,
      balanceMaxShift: 1,
      parentId: 0,
      rest: s.rest,
      autoScalingStrategy: 'time',
    };
  }
}

/** MasterSupervisor::basename(): the host's name as Str::slug writes it, which horizon:pause and friends look for. */
export function masterBasename(host = hostname()): string {
  return slug(host, '-');
}
