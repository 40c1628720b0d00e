/** The environment of a toolport a bench starts as a child process. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_TOOLS = path.join(path.dirname(fileURLToPath(import.meta.url)), '../plugins/bench-tools.ts');

/**
 * The shell's environment with loopback on `port`, warn-level logs and the bench tools, never the
 * shell's REDIS_URL (it could point at the shared Redis), then `extra` (a bench's own Redis, a tools file).
 */
export function toolportEnv(port: number, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', TOOL_PLUGINS: BENCH_TOOLS };
  delete env.REDIS_URL;
  return { ...env, ...extra };
}
