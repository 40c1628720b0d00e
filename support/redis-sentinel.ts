/**
 * A throwaway Sentinel topology on loopback ports: one primary, two replicas and three
 * `redis-server --sentinel`, each sentinel with its own config file it may rewrite. Failover is fast
 * (down-after-milliseconds 1000), so a test can kill the primary and see a replica promoted in seconds.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { isRunning, startChild, waitUntilReady, type Child } from './children.js';
import { freePorts } from './ports.js';

const execFileAsync = promisify(execFile);
const cli = (port: number, ...args: string[]) => execFileAsync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5000 });
const NAME = 'toolport-primary';

/** Replication as fast as loopback allows: no disk, no delay. */
const SERVER_ARGS = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'];

export class RedisSentinel {
  readonly name = NAME;
  /** Data nodes by port (the primary first at start). */
  readonly #servers = new Map<number, Child>();
  readonly #sentinels: { port: number; child: Child }[] = [];
  readonly #dir: string;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  static async start(replicas = 2, sentinels = 3): Promise<RedisSentinel> {
    const ports = await freePorts(1 + replicas + sentinels);
    if (ports.includes(6379)) throw new Error('refusing to use the shared port 6379');
    const topology = new RedisSentinel(await mkdtemp(path.join(tmpdir(), 'toolport-sentinel-')));
    try {
      const [primary, ...rest] = ports as [number, ...number[]];
      await topology.#startServer(primary, []);
      for (const port of rest.slice(0, replicas)) await topology.#startServer(port, ['--replicaof', '127.0.0.1', String(primary)]);
      await topology.#waitForReplicas(primary, replicas);
      for (const port of rest.slice(replicas)) await topology.#startSentinel(port, primary);
      await topology.#waitForSentinels(sentinels);
    } catch (err) {
      await topology.stop();
      throw new Error(
        `no throwaway Redis Sentinel topology could be started (redis-server and redis-cli needed): ${err instanceof Error ? err.message : String(err)}`,
        {
          cause: err,
        },
      );
    }
    return topology;
  }

  async #startServer(port: number, extra: string[]): Promise<void> {
    const child = startChild(
      `redis-server :${port}`,
      'redis-server',
      ['--port', String(port), ...SERVER_ARGS, '--replica-announce-ip', '127.0.0.1', ...extra],
      {
        cwd: this.#dir,
        env: process.env,
      },
    );
    this.#servers.set(port, child);
    await waitUntilReady(child, 'PING → PONG', async () => (await cli(port, 'ping')).stdout.trim() === 'PONG');
  }

  async #startSentinel(port: number, primary: number): Promise<void> {
    const file = path.join(this.#dir, `sentinel-${port}.conf`);
    await writeFile(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${this.#dir}`,
        'sentinel announce-ip 127.0.0.1',
        `sentinel monitor ${NAME} 127.0.0.1 ${primary} 2`,
        `sentinel down-after-milliseconds ${NAME} 1000`,
        `sentinel failover-timeout ${NAME} 5000`,
        `sentinel parallel-syncs ${NAME} 2`,
        '',
      ].join('\n'),
    );
    const child = startChild(`redis sentinel :${port}`, 'redis-server', [file, '--sentinel'], { cwd: this.#dir, env: process.env });
    this.#sentinels.push({ port, child });
    await waitUntilReady(child, 'PING → PONG', async () => (await cli(port, 'ping')).stdout.trim() === 'PONG');
  }

  async #waitForReplicas(primary: number, count: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const info = (await cli(primary, 'info', 'replication')).stdout;
      const online = info.split('\n').filter((line) => /^slave\d+:.*state=online/.test(line)).length;
      if (online >= count) return;
      await sleep(50);
    }
    throw new Error(`the primary :${primary} did not get ${count} online replicas within 10 s`);
  }

  /** Every sentinel sees the others (and so can agree on a failover). */
  async #waitForSentinels(count: number): Promise<void> {
    for (let i = 0; i < 300; i++) {
      const seen = await Promise.all(
        this.#sentinels.map(async ({ port }) =>
          Number(/num-other-sentinels\s+(\d+)/.exec((await cli(port, 'sentinel', 'master', NAME)).stdout.replace(/\n/g, ' '))?.[1] ?? 0),
        ),
      );
      if (seen.every((n) => n >= count - 1)) return;
      await sleep(100);
    }
    throw new Error(`the ${count} sentinels did not find each other within 30 s`);
  }

  /** REDIS_SENTINELS for toolport. */
  get sentinels(): string {
    return this.#sentinels.map(({ port }) => `127.0.0.1:${port}`).join(',');
  }

  /** The port the sentinels name as the primary now. */
  async primaryPort(): Promise<number> {
    for (const { port, child } of this.#sentinels) {
      if (!isRunning(child)) continue;
      const lines = (await cli(port, 'sentinel', 'get-master-addr-by-name', NAME)).stdout.trim().split('\n');
      if (lines.length === 2) return Number(lines[1]);
    }
    throw new Error('no sentinel names a primary');
  }

  /** The data nodes that are not the primary now. */
  async replicaPorts(): Promise<number[]> {
    const primary = await this.primaryPort();
    return [...this.#servers.keys()].filter((port) => port !== primary && isRunning(this.#servers.get(port)!));
  }

  /** kill -9 of the primary; resolves with the port it had. */
  async killPrimary(): Promise<number> {
    const port = await this.primaryPort();
    this.#servers.get(port)!.proc.kill('SIGKILL');
    return port;
  }

  /** A graceful failover (SENTINEL FAILOVER): the old primary lives on, demoted to a replica; resolves with its port. */
  async failover(): Promise<number> {
    const port = await this.primaryPort();
    await cli(this.#sentinels[0]!.port, 'sentinel', 'failover', NAME);
    return port;
  }

  /** Waits until the sentinels name a primary other than `old` and it answers as one; resolves with Date.now() then. */
  async waitForPromotion(old: number, timeoutMs = 20_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const now = await this.primaryPort().catch(() => old);
      if (now !== old && (await cli(now, 'role').catch(() => ({ stdout: '' }))).stdout.startsWith('master')) return Date.now();
      await sleep(50);
    }
    throw new Error(`no replica was promoted within ${timeoutMs / 1000} s of losing :${old}`);
  }

  /** SIGSTOP (or SIGCONT) of every replica: the primary's WAIT then times out. */
  async pauseReplicas(paused: boolean): Promise<void> {
    for (const port of await this.replicaPorts()) this.#servers.get(port)!.proc.kill(paused ? 'SIGSTOP' : 'SIGCONT');
  }

  async stop(): Promise<void> {
    const all = [...this.#servers.values(), ...this.#sentinels.map(({ child }) => child)].filter(isRunning);
    await Promise.all(
      all.map((child) => {
        const exited = new Promise((resolve) => child.proc.once('exit', resolve));
        child.proc.kill('SIGCONT');
        child.proc.kill('SIGKILL');
        return exited;
      }),
    );
    await rm(this.#dir, { recursive: true, force: true });
  }
}
