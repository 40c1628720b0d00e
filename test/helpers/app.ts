/** Builds the real app for a test, on the memory store or on the run's throwaway Redis. */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { registerTestTools } from './tools.ts';

export type StoreKind = 'memory' | 'redis';
export const STORES: StoreKind[] = ['memory', 'redis'];

export interface TestAppOptions {
  env?: Record<string, string>;
  redisUrl?: string;
  logger?: Logger;
  register?: (registry: SourceRegistry) => void;
}

export async function makeApp(kind: StoreKind, options: TestAppOptions = {}): Promise<FastifyInstance> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    // A loaded test machine must not make unrelated tests' calls answer 503 overloaded (event-loop.test.ts sets its own).
    MAX_EVENT_LOOP_DELAY_MS: '0',
    KEY_PREFIX: `test:${randomUUID().slice(0, 8)}:`,
    ...(kind === 'redis' && { REDIS_URL: options.redisUrl ?? inject('redisUrl') }),
    ...options.env,
  });
  const app = await buildApp(config, {
    ...(options.logger && { logger: options.logger }),
    register: (registry) => {
      registerTestTools(registry);
      options.register?.(registry);
    },
  });
  await app.ready();
  return app;
}

/** POST a JSON body to /tools/invoke (or another path) and return status, headers and parsed body. */
export async function post(app: FastifyInstance, body: unknown, headers: Record<string, string> = {}, url = '/tools/invoke') {
  const response = await app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.statusCode, headers: response.headers, body: response.json() as Record<string, any> };
}

/** GET a JSON route and return status, headers and parsed body. */
export async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'GET', url, headers });
  const json = /json/.test(String(response.headers['content-type'] ?? '')) && response.body !== '';
  return { status: response.statusCode, headers: response.headers, text: response.body, body: (json ? response.json() : null) as Record<string, any> };
}

/** The session's ToolInvoked events, oldest first, as GET /sessions/{id}/events answers them. */
export async function sessionEvents(app: FastifyInstance, session: string): Promise<Record<string, any>[]> {
  const page = await get(app, `/sessions/${session}/events?limit=1000`);
  if (page.status !== 200) throw new Error(`GET /sessions/${session}/events answered ${page.status}: ${page.text}`);
  return page.body.events as Record<string, any>[];
}

/** Polls GET /readyz until the store answers again (after a test stopped or froze Redis). */
export async function waitUntilReady(app: FastifyInstance, timeoutMs = 8000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the service did not become ready again');
}
