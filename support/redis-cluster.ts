/** A throwaway Redis Cluster of three masters on loopback ports, for the cluster tests. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { isRunning, startChild, waitUntilReady, type Child } from './children.js';
import { freePorts } from './ports.js';

const execFileAsync = promisify(execFile);
const cli = (port: number, ...args: string[]) => execFileAsync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 });

export class RedisCluster {
  readonly ports: number[];
  readonly #children: Child[];
  readonly #dir: string;

  private constructor(ports: number[], children: Child[], dir: string) {
    this.ports = ports;
    this.#children = children;
    this.#dir = dir;
  }

  /** `replicas` per master; `nodeTimeoutMs` is how soon a dead master's replica takes over. */
  static async start(masters = 3, replicas = 0, nodeTimeoutMs = 2000): Promise<RedisCluster> {
    const ports = await freePorts(masters * (1 + replicas));
    if (ports.includes(6379)) throw new Error('refusing to use the shared port 6379');
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-cluster-'));
    const children = ports.map((port) =>
      startChild(
        `redis cluster node :${port}`,
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          String(nodeTimeoutMs),
          '--repl-diskless-sync',
          'yes',
          '--repl-diskless-sync-delay',
          '0',
        ],
        { cwd: dir, env: process.env },
      ),
    );
    const cluster = new RedisCluster(ports, children, dir);
    try {
      for (const [i, port] of ports.entries()) {
        await waitUntilReady(children[i]!, 'PING → PONG', async () => (await cli(port, 'ping')).stdout.trim() === 'PONG');
      }
      await execFileAsync(
        'redis-cli',
        ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
        {
          timeout: 30_000,
        },
      );
      for (let i = 0; ; i++) {
        const states = await Promise.all(ports.map(async (port) => (await cli(port, 'cluster', 'info')).stdout.includes('cluster_state:ok')));
        if (states.every(Boolean)) break;
        if (i > 100) throw new Error('the cluster did not reach cluster_state:ok within 10 s');
        await sleep(100);
      }
      for (let i = 0; replicas > 0; i++) {
        const roles = await Promise.all(ports.map(async (port) => (await cli(port, 'info', 'replication')).stdout));
        const masters = roles.filter((info) => info.includes('role:master'));
        if (masters.every((info) => /connected_slaves:[1-9]/.test(info) && /state=online/.test(info))) break;
        if (i > 100) throw new Error('the replicas did not come online within 10 s');
        await sleep(100);
      }
    } catch (err) {
      await cluster.stop();
      throw new Error(`no throwaway Redis Cluster could be started (redis-server and redis-cli needed): ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    return cluster;
  }

  /** REDIS_CLUSTER_NODES for toolport. */
  get nodes(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  /** The port of the master that serves `key`. */
  async nodeOf(key: string): Promise<number> {
    const slot = Number((await cli(this.ports[0]!, 'cluster', 'keyslot', key)).stdout.trim());
    for (const port of this.ports) {
      const myself = (await cli(port, 'cluster', 'nodes')).stdout.split('\n').find((line) => line.includes('myself'));
      if (myself !== undefined && ownsSlot(myself, slot)) return port;
    }
    throw new Error(`no node owns slot ${slot}`);
  }

  /** kill -9 of the master that serves `key`; resolves with its port. */
  async killMasterOf(key: string): Promise<number> {
    const port = await this.nodeOf(key);
    this.#children[this.ports.indexOf(port)]!.proc.kill('SIGKILL');
    return port;
  }

  /** Waits until a live node reports cluster_state:ok with `dead` gone from the masters; resolves with Date.now() then. */
  async waitForFailover(dead: number, timeoutMs = 20_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    const live = this.ports.filter((port) => port !== dead);
    while (Date.now() < deadline) {
      const nodes = (await cli(live[0]!, 'cluster', 'nodes').catch(() => ({ stdout: '' }))).stdout;
      const masters = nodes.split('\n').filter((line) => / master /.test(line.replace('myself,', '')) && !line.includes('fail'));
      const ok = (await cli(live[0]!, 'cluster', 'info').catch(() => ({ stdout: '' }))).stdout.includes('cluster_state:ok');
      if (ok && masters.every((line) => !line.includes(`:${dead}@`))) return Date.now();
      await sleep(50);
    }
    throw new Error(`no replica took over from :${dead} within ${timeoutMs / 1000} s`);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.#children.filter(isRunning).map((child) => {
        const exited = new Promise((resolve) => child.proc.once('exit', resolve));
        child.proc.kill('SIGKILL');
        return exited;
      }),
    );
    await rm(this.#dir, { recursive: true, force: true });
  }
}

function ownsSlot(nodesLine: string, slot: number): boolean {
  return nodesLine
    .split(' ')
    .slice(8)
    .some((range) => {
      const [from, to] = range.split('-').map(Number);
      return from !== undefined && slot >= from && slot <= (to ?? from);
    });
}
