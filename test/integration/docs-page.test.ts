/**
 * Swagger UI with API keys on (docs/operations.md, docs/console.md): the page, its assets and the document load without a
 * key (the document then leaves out the per-tool operations), it offers Bearer authorization, and a
 * real browser renders it.
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
const AGENT = `sk-agent-${randomUUID()}`;

describe('/docs with API keys on', () => {
  let app: FastifyInstance;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'toolport-docs-'));
    const keys = path.join(dir, 'keys.json');
    await writeFile(keys, JSON.stringify([{ id: 'agent', key_sha256: sha(AGENT), tools: ['echo', 'planning_*'] }]));
    app = await makeApp('memory', { env: { API_KEYS_FILE: keys } });
  });
  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

  it('serves the page, its assets and the document without a key, the document without per-tool operations', async () => {
    const page = await get('/docs/');
    expect(page.statusCode).toBe(200);
    for (const asset of ['/docs/static/swagger-ui.css', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js']) {
      expect((await get(asset)).statusCode, asset).toBe(200);
    }
    for (const url of ['/docs/json', '/openapi.json']) {
      const document = (await get(url)).json();
      expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(document.security).toEqual([{ bearer: [] }]);
      expect(document.paths['/tools/invoke']).toBeDefined();
      expect(
        Object.keys(document.paths).filter((p) => /^\/tools\/[a-z0-9_-]+\/invoke$/.test(p) && p !== '/tools/invoke'),
        url,
      ).toEqual([]);
    }
  });

  it("lists a key's own tools as operations, and refuses a wrong key", async () => {
    const document = (await get('/openapi.json', { authorization: `Bearer ${AGENT}` })).json();
    const operations = Object.keys(document.paths).filter((p) => /^\/tools\/[a-z0-9_-]+\/invoke$/.test(p) && p !== '/tools/invoke');
    expect(operations).toContain('/tools/echo/invoke');
    expect(operations).toContain('/tools/planning_read_plan/invoke');
    expect(operations).not.toContain('/tools/counter/invoke');
    expect((await get('/openapi.json', { authorization: 'Bearer sk-wrong' })).statusCode).toBe(401);
    expect((await get('/tools')).statusCode).toBe(401);
  });

  it('renders in a real browser with no key, with an Authorize button for the bearer key', async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`chromium is missing at ${CHROMIUM}: install it (apt-get install chromium) or set CHROMIUM_PATH`);
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const profile = await mkdtemp(path.join(tmpdir(), 'toolport-chromium-'));
    try {
      const { stdout } = await promisify(execFile)(
        CHROMIUM,
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          `--user-data-dir=${profile}`,
          '--virtual-time-budget=15000',
          '--dump-dom',
          `${address}/docs/`,
        ],
        { timeout: 60_000, maxBuffer: 32 * 1024 * 1024 },
      );
      expect(stdout).toContain('swagger-ui');
      expect(stdout).toMatch(/class="btn authorize/);
      expect(stdout).toContain('/tools/invoke');
      expect(stdout).toContain('listTools');
    } finally {
      await rm(profile, { recursive: true, force: true });
    }
  }, 90_000);
});
