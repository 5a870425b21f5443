/**
 * A Redis Cluster of our own on loopback ports: three masters with a replica each, made with
 * `redis-server --cluster-enabled yes` and `redis-cli --cluster create`, removed afterwards.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, redisAnswers } from '../../src/testing/index.js';

export interface TestCluster {
  nodes: string[];
  ports: number[];
  processes: Map<number, ChildProcess>;
  /** Kills one master outright; resolves when its replica has taken over. */
  killMasterOf(key: string): Promise<number>;
  stop(): Promise<void>;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startCluster(): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-cluster-'));
  const ports: number[] = [];
  // Cluster bus ports are port + 10000: keep both under 65536.
  while (ports.length < 6) {
    const port = await freePort();
    if (port < 55000 && !ports.includes(port)) ports.push(port);
  }
  const processes = new Map<number, ChildProcess>();
  for (const port of ports) {
    const nodeDir = join(dir, String(port));
    mkdirSync(nodeDir);
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '1000',
        '--cluster-replica-validity-factor',
        '0',
        '--dir',
        nodeDir,
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      { stdio: 'ignore' },
    );
    processes.set(port, child);
  }
  for (const port of ports) while (!(await redisAnswers(port))) await pause(50);
  const created = spawnSync(
    'redis-cli',
    ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'],
    { encoding: 'utf8' },
  );
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  await waitForClusterOk(ports[0]!);
  await waitForReplicas(ports);
  const nodes = ports.map((p) => `127.0.0.1:${p}`);
  return {
    nodes,
    ports,
    processes,
    async killMasterOf(key: string) {
      const admin = new Redis(
        ports.find((p) => processes.has(p))!,
        '127.0.0.1',
      );
      admin.on('error', () => undefined);
      const slot = Number(await admin.call('CLUSTER', 'KEYSLOT', key));
      const slots = (await admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      admin.disconnect();
      const owner = slots.find(([from, to]) => slot >= from && slot <= to)![2][1];
      processes.get(owner)!.kill('SIGKILL');
      processes.delete(owner);
      // Wait until another node serves the slot.
      for (let i = 0; i < 200; i++) {
        await pause(100);
        const probe = new Redis(
          ports.find((p) => processes.has(p))!,
          '127.0.0.1',
        );
        probe.on('error', () => undefined);
        try {
          const now = (await probe.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
          const serving = now.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
          if (serving !== undefined && serving !== owner && ((await probe.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok'))
            return owner;
        } finally {
          probe.disconnect();
        }
      }
      throw new Error('no replica took over');
    },
    async stop() {
      for (const child of processes.values()) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every master has a replica that is in sync: only then can one take over. */
async function waitForReplicas(ports: number[]): Promise<void> {
  for (let i = 0; i < 300; i++) {
    let linked = 0;
    for (const port of ports) {
      const probe = new Redis(port, '127.0.0.1');
      probe.on('error', () => undefined);
      try {
        const info = await probe.info('replication');
        if (info.includes('role:slave') && info.includes('master_link_status:up') && !info.includes('master_sync_in_progress:1')) linked++;
      } finally {
        probe.disconnect();
      }
    }
    if (linked === ports.length / 2) return;
    await pause(100);
  }
  throw new Error('the replicas did not come in sync');
}

async function waitForClusterOk(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const probe = new Redis(port, '127.0.0.1');
    probe.on('error', () => undefined);
    try {
      if (((await probe.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok')) return;
    } finally {
      probe.disconnect();
    }
    await pause(100);
  }
  throw new Error('the cluster did not become ok');
}
