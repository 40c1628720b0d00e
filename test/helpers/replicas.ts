/** A toolport replica in a child process on the tests' Redis (the server as `npm start` runs it). */
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { http200, startChild, waitUntilReady, type Child } from '../../support/children.ts';
import { freePorts } from '../../support/ports.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Starts `src/server.ts` on a free port with `env` (at `LOG_LEVEL=warn` on the tests' Redis) and
 * resolves once `/readyz` answers 200; a start (tsx compiling the sources) takes tens of seconds on a
 * loaded machine, hence the long default wait.
 */
export async function startReplica(label: string, env: Record<string, string>, readyMs = 90_000): Promise<{ child: Child; port: number }> {
  const [port] = (await freePorts(1)) as [number];
  const child = startChild(label, process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), REDIS_URL: inject('redisUrl'), LOG_LEVEL: 'warn', ...env },
  });
  await waitUntilReady(child, 'GET /readyz → 200', http200(`http://127.0.0.1:${port}/readyz`), readyMs);
  return { child, port };
}
