/** A throwaway, non-persistent redis-server for tests and benchmarks: never the shared one on 6379. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { isRunning, startChild, waitUntilReady, type Child } from './children.js';
import { freePorts } from './ports.js';

const execFileAsync = promisify(execFile);

/** Start redis-server on `port` and wait until it answers PING. */
export async function startRedis(port: number, cwd = process.cwd(), extraArgs: string[] = []): Promise<Child> {
  if (port === 6379) throw new Error('refusing to start a throwaway Redis on the shared port 6379');
  const child = startChild(
    `redis-server :${port}`,
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs],
    {
      cwd,
      env: process.env,
    },
  );
  try {
    await waitUntilReady(child, 'redis-cli PING → PONG', async () => {
      const { stdout } = await execFileAsync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { timeout: 1000 });
      return stdout.trim() === 'PONG';
    });
  } catch (err) {
    throw new Error(
      `no throwaway Redis could be started (is redis-server installed? apt-get install redis-server, or set REDIS_URL): ${
        err instanceof Error ? err.message : String(err)
      }`,
      { cause: err },
    );
  }
  return child;
}

/** A Redis the test controls: stop it, pause it (SIGSTOP) and bring it back on the same port. */
export class RedisServer {
  readonly port: number;
  #child: Child;

  private constructor(port: number, child: Child) {
    this.port = port;
    this.#child = child;
  }

  static async start(): Promise<RedisServer> {
    const [port] = await freePorts(1);
    return new RedisServer(port!, await startRedis(port!));
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  pause(): void {
    this.#child.proc.kill('SIGSTOP');
  }

  resume(): void {
    this.#child.proc.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    if (!isRunning(this.#child)) return;
    const exited = new Promise((resolve) => this.#child.proc.once('exit', resolve));
    this.#child.proc.kill('SIGCONT');
    this.#child.proc.kill('SIGKILL');
    await exited;
  }

  async restart(): Promise<void> {
    await this.stop();
    this.#child = await startRedis(this.port);
  }
}
