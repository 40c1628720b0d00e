import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startChild, waitUntilReady, type Child } from './children.js';

const execFileAsync = promisify(execFile);

/**
 * Start a throwaway, non-persistent redis-server on `port` (never the shared 6379)
 * and wait until it answers PING.
 */
export async function startRedis(port: number, cwd: string): Promise<Child> {
  if (port === 6379) throw new Error('refusing to start the benchmark Redis on the shared port 6379');
  const child = startChild(
    `redis-server :${port}`,
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { cwd, env: process.env },
  );
  await waitUntilReady(child, 'redis-cli PING → PONG', async () => {
    const { stdout } = await execFileAsync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { timeout: 1000 });
    return stdout.trim() === 'PONG';
  });
  return child;
}
