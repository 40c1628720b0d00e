/**
 * Hosts and origins (docs/operations.md#hosts-and-origins): a rebound DNS name reaches nothing, a
 * page of another origin cannot call /mcp nor change state, and the names and origins that are
 * allowed keep working — through the real app, and through the official MCP conformance suite's
 * dns-rebinding-protection scenario against a listening toolport.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';

const run = promisify(execFile);
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hosts-test', version: '1.0.0' } },
};
const CALL = { name: 'echo', arguments: { text: 'hi' } };

async function request(app: FastifyInstance, method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown) {
  const response = await app.inject({
    method,
    url,
    headers: {
      accept: url.startsWith('/mcp') ? 'application/json, text/event-stream' : 'application/json',
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body !== undefined && { payload: JSON.stringify(body) }),
  });
  const json = /json/.test(String(response.headers['content-type'] ?? ''));
  return { status: response.statusCode, headers: response.headers, body: (json ? response.json() : null) as Record<string, any> | null };
}

const ROUTES: [string, 'GET' | 'POST', string, unknown?][] = [
  ['POST /tools/invoke', 'POST', '/tools/invoke', CALL],
  ['POST /mcp', 'POST', '/mcp', INITIALIZE],
  ['GET /tools', 'GET', '/tools'],
  ['GET /console', 'GET', '/console'],
  ['GET /approvals', 'GET', '/approvals'],
];

describe('Host on a loopback bind (the default)', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp('memory', { env: { PUBLIC_URL: 'https://tools.example.com/base', ALLOWED_HOSTS: 'toolport, Gateway.internal:9000' } });
  });
  afterAll(() => app.close());

  for (const [label, method, url, body] of ROUTES) {
    it(`refuses a rebound name on ${label} with 403 host-not-allowed`, async () => {
      const answer = await request(app, method, url, { host: 'evil.example.com:8080', origin: 'http://evil.example.com:8080' }, body);
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ type: 'urn:toolport:problem:host-not-allowed', status: 403 });
      expect(answer.body!.detail).toContain('ALLOWED_HOSTS');
    });
  }

  it('answers the loopback names and addresses, PUBLIC_URL and ALLOWED_HOSTS, whatever the port and case', async () => {
    for (const host of [
      'localhost:8080',
      'LOCALHOST',
      '127.0.0.1:8080',
      '[::1]:8080',
      'tools.example.com',
      'toolport:8080',
      'gateway.internal',
      '10.0.0.7:8080',
    ]) {
      const answer = await request(app, 'POST', '/tools/invoke', { host }, CALL);
      expect(answer.status, host).toBe(200);
      expect(answer.body!.success).toBe(true);
    }
    for (const [, method, url, body] of ROUTES) expect((await request(app, method, url, { host: 'toolport:8080' }, body)).status, url).toBeLessThan(400);
  });

  it('refuses a name that only ends like an allowed one', async () => {
    for (const host of ['localhost.evil.example', 'eviltoolport', 'toolport.evil.example:8080']) {
      expect((await request(app, 'GET', '/tools', { host })).status, host).toBe(403);
    }
  });
});

describe('Origin', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp('memory', { env: { PUBLIC_URL: 'https://tools.example.com', CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' } });
  });
  afterAll(() => app.close());

  it('refuses a foreign page on /mcp and on every route that changes state, with 403 origin-not-allowed', async () => {
    const foreign = { host: 'localhost:8080', origin: 'https://evil.example.com' };
    for (const [method, url, body] of [
      ['POST', '/mcp', INITIALIZE],
      ['GET', '/mcp', undefined],
      ['POST', '/tools/invoke', CALL],
      ['POST', '/sessions', {}],
    ] as const) {
      const answer = await request(app, method, url, foreign, body);
      expect(answer.status, url).toBe(403);
      expect(answer.body).toMatchObject({ type: 'urn:toolport:problem:origin-not-allowed' });
      expect(answer.body!.detail).toContain('CORS_ORIGINS');
    }
    // `null` is what a sandboxed frame or a file sends.
    expect((await request(app, 'POST', '/tools/invoke', { ...foreign, origin: 'null' }, CALL)).status).toBe(403);
  });

  it('lets a foreign page read what reads nothing of state-changing (GET /tools), as browsers keep the answer from it without CORS', async () => {
    const answer = await request(app, 'GET', '/tools', { host: 'localhost:8080', origin: 'https://evil.example.com' });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });

  it("takes the service's own pages (same Host, or PUBLIC_URL's origin) and requests without Origin", async () => {
    expect((await request(app, 'POST', '/tools/invoke', { host: 'localhost:8080', origin: 'http://localhost:8080' }, CALL)).status).toBe(200);
    expect((await request(app, 'POST', '/tools/invoke', { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' }, CALL)).status).toBe(200);
    expect((await request(app, 'POST', '/tools/invoke', { host: 'internal:8080', origin: 'https://tools.example.com' }, CALL)).status).toBe(403); // host first
    expect((await request(app, 'POST', '/tools/invoke', { host: 'tools.example.com', origin: 'https://tools.example.com' }, CALL)).status).toBe(200);
    expect((await request(app, 'POST', '/mcp', { host: 'localhost:8080' }, INITIALIZE)).status).toBe(200);
  });

  it('takes the origins of CORS_ORIGINS, with CORS headers and an answered preflight', async () => {
    const answer = await request(app, 'POST', '/tools/invoke', { host: 'localhost:8080', origin: 'https://app.example.com' }, CALL);
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(String(answer.headers['access-control-expose-headers'])).toContain('mcp-session-id');
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/mcp',
      headers: {
        host: 'localhost:8080',
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect((await request(app, 'POST', '/mcp', { host: 'localhost:8080', origin: 'http://localhost:5173' }, INITIALIZE)).status).toBe(200);
    // A streamed answer carries them too.
    const streamed = await app.inject({
      method: 'POST',
      url: '/tools/invoke',
      headers: { host: 'localhost:8080', origin: 'https://app.example.com', accept: 'text/event-stream', 'content-type': 'application/json' },
      payload: JSON.stringify(CALL),
    });
    expect(streamed.headers['content-type']).toBe('text/event-stream');
    expect(streamed.headers['access-control-allow-origin']).toBe('https://app.example.com');
  });

  it('has no CORS at all when CORS_ORIGINS is not set', async () => {
    const plain = await makeApp('memory');
    try {
      const preflight = await plain.inject({
        method: 'OPTIONS',
        url: '/tools/invoke',
        headers: { host: 'localhost:8080', origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      });
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});

describe('Host on a network bind (HOST=0.0.0.0, as in a container)', () => {
  it('answers every name when ALLOWED_HOSTS is not set, as a Kubernetes Service or compose name reaches it', async () => {
    const app = await makeApp('memory', { env: { HOST: '0.0.0.0', PUBLIC_URL: 'https://tools.example.com' } });
    try {
      for (const host of ['toolport:8080', 'toolport.tools.svc.cluster.local', '10.42.0.12:8080']) {
        expect((await request(app, 'POST', '/tools/invoke', { host }, CALL)).status, host).toBe(200);
      }
    } finally {
      await app.close();
    }
  });

  it('answers only the listed names (and addresses, for probes) once ALLOWED_HOSTS is set, as the compose file does', async () => {
    const app = await makeApp('memory', { env: { HOST: '0.0.0.0', ALLOWED_HOSTS: 'toolport' } });
    try {
      expect((await request(app, 'POST', '/mcp', { host: 'toolport:8080' }, INITIALIZE)).status).toBe(200);
      expect((await request(app, 'GET', '/healthz', { host: '10.42.0.12:8080' })).status).toBe(200);
      expect((await request(app, 'GET', '/healthz', { host: 'localhost:8080' })).status).toBe(200);
      expect((await request(app, 'POST', '/mcp', { host: 'evil.example.com' }, INITIALIZE)).status).toBe(403);
    } finally {
      await app.close();
    }
  });

  it('answers every name with ALLOWED_HOSTS=*', async () => {
    const app = await makeApp('memory', { env: { ALLOWED_HOSTS: '*' } });
    try {
      expect((await request(app, 'GET', '/tools', { host: 'anything.example.com' })).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('the MCP conformance suite', () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    app = await makeApp('memory');
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    url = `${base.replace('127.0.0.1', 'localhost')}/mcp`;
  });
  afterAll(() => app.close());

  it('passes the dns-rebinding-protection server scenario', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'toolport-conformance-'));
    try {
      const bin = path.resolve('node_modules/.bin/conformance');
      await run(bin, ['server', '--url', url, '--scenario', 'dns-rebinding-protection', '-o', out], { timeout: 60_000 });
      const files = (await readdir(out, { recursive: true })).filter((f) => f.endsWith('checks.json'));
      expect(files.length).toBeGreaterThan(0);
      const checks = JSON.parse(await readFile(path.join(out, files[0]!), 'utf8')) as { id: string; status: string }[];
      expect(checks.map((c) => [c.id, c.status])).toEqual([
        ['localhost-host-rebinding-rejected', 'SUCCESS'],
        ['localhost-host-valid-accepted', 'SUCCESS'],
      ]);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 90_000);
});
