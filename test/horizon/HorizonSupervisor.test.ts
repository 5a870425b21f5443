/**
 * A Node worker as a master supervisor on Horizon's dashboard: the records Horizon's
 * repositories read back (masters and supervisors seen in the last seconds, their hashes), the
 * processes its workload page counts, Horizon's queued supervisor commands, and the signals
 * horizon:pause, horizon:continue and horizon:terminate send to a master's pid.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { HorizonSupervisor, masterBasename } from '../../src/horizon/index.js';
import { connectRedis } from '../../src/redis/index.js';
import { REDIS_URL, rawClient, removePrefix } from '../helpers/redis.js';
import { runPhpScript } from '../helpers/php.js';

const prefix = `lqb-horizon-sup-${randomBytes(4).toString('hex')}:`;
const raw = rawClient();
const client = connectRedis({ url: REDIS_URL });

afterAll(async () => {
  await removePrefix(raw, prefix);
  raw.disconnect();
  client.disconnect();
});

describe('HorizonSupervisor', () => {
  it("writes a master and its supervisor as Horizon's repositories read them, and forgets them on stop", async () => {
    const supervisor = new HorizonSupervisor(client, { prefix, queues: ['high', 'default'], processes: 4, settings: { timeout: 90 } });
    await supervisor.start();
    const now = Math.floor(Date.now() / 1000);
    // MasterSupervisorRepository::names(): seen in the last 14 s.
    expect(await raw.zrevrangebyscore(`${prefix}masters`, '+inf', now - 14), 'masters').toEqual([supervisor.masterName]);
    expect(await raw.zrevrangebyscore(`${prefix}supervisors`, '+inf', now - 29), 'supervisors').toEqual([supervisor.name]);
    const master = await raw.hgetall(`${prefix}master:${supervisor.masterName}`);
    expect(master, 'the master record').toEqual({
      name: supervisor.masterName,
      pid: String(process.pid),
      status: 'running',
      supervisors: JSON.stringify([supervisor.name]),
    });
    expect(await raw.ttl(`${prefix}master:${supervisor.masterName}`), 'the master expires as Horizon’s does').toBeLessThanOrEqual(15);
    const record = await raw.hgetall(`${prefix}supervisor:${supervisor.name}`);
    expect(record.master, "the supervisor's master: its name up to the last ':'").toBe(supervisor.name.split(':').slice(0, -1).join(':'));
    expect(JSON.parse(record.processes!), 'processes per connection:queue, as the workload page sums them').toEqual({
      'redis:high,default': 4,
    });
    const options = JSON.parse(record.options!) as Record<string, unknown>;
    expect(options.queue, 'options.queue').toBe('high,default');
    expect(options.timeout, 'options.timeout (longestActiveTimeout reads it)').toBe(90);
    expect(await raw.ttl(`${prefix}supervisor:${supervisor.name}`)).toBeLessThanOrEqual(30);

    await supervisor.stop();
    expect(await raw.keys(`${prefix}*`), 'nothing left').toEqual([]);
  });

  it("names its master as Horizon's MasterSupervisor::basename() does, so horizon:pause finds its pid", () => {
    const php = runPhpScript('horizon-values.php', JSON.stringify([hostname()]), ['basename']);
    expect(masterBasename(), `host ${hostname()}`).toBe(JSON.parse(php)[0]);
    expect(new HorizonSupervisor(client, { prefix, queues: ['default'], processes: 1 }).masterName.startsWith(`${masterBasename()}-`)).toBe(
      true,
    );
  });

  it("carries out Horizon's queued Pause, ContinueWorking and Terminate commands, and shows its status", async () => {
    const heard: string[] = [];
    const supervisor = new HorizonSupervisor(client, {
      prefix,
      queues: ['default'],
      processes: 2,
      onPause: () => heard.push('pause'),
      onContinue: () => heard.push('continue'),
      onTerminate: () => heard.push('terminate'),
    });
    await supervisor.beat();
    // RedisHorizonCommandQueue::push: JSON {command, options} on commands:NAME.
    await raw.rpush(
      `${prefix}commands:${supervisor.name}`,
      JSON.stringify({ command: 'Laravel\\Horizon\\SupervisorCommands\\Pause', options: [] }),
    );
    await supervisor.beat();
    expect(heard, 'after Pause').toEqual(['pause']);
    await supervisor.beat();
    expect(await raw.hget(`${prefix}supervisor:${supervisor.name}`, 'status'), 'shown paused').toBe('paused');
    expect(await raw.hget(`${prefix}master:${supervisor.masterName}`, 'status'), 'master shown paused').toBe('paused');
    await raw.rpush(
      `${prefix}commands:${supervisor.name}`,
      JSON.stringify({ command: 'Laravel\\Horizon\\SupervisorCommands\\ContinueWorking', options: [] }),
      JSON.stringify({ command: 'Laravel\\Horizon\\SupervisorCommands\\Terminate', options: { status: 0 } }),
    );
    await supervisor.beat();
    expect(heard, 'after ContinueWorking and Terminate').toEqual(['pause', 'continue', 'terminate']);
    expect(await raw.llen(`${prefix}commands:${supervisor.name}`), 'the commands were taken').toBe(0);
    await supervisor.stop();
  });

  it('obeys the signals horizon:pause (SIGUSR2) and horizon:continue (SIGCONT) send to its pid', async () => {
    const heard: string[] = [];
    const supervisor = new HorizonSupervisor(client, {
      prefix,
      queues: ['default'],
      processes: 1,
      onPause: () => heard.push('pause'),
      onContinue: () => heard.push('continue'),
    });
    supervisor.listenForSignals();
    process.kill(process.pid, 'SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(supervisor.status, 'after SIGUSR2').toBe('paused');
    process.kill(process.pid, 'SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(supervisor.status, 'after SIGCONT').toBe('running');
    expect(heard).toEqual(['pause', 'continue']);
    await supervisor.stop();
    expect(process.listeners('SIGUSR2').length + process.listeners('SIGCONT').length, 'its signal listeners removed').toBe(0);
  });
});
