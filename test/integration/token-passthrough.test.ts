/**
 * No token passthrough (docs/identity.md, MCP authorization): an upstream behind toolport never receives the
 * caller's access token — not as Authorization, not in any other header, not in the body.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post } from '../helpers/app.ts';
import { startIssuer, type TestIssuer } from '../helpers/issuer.ts';

const PUBLIC_URL = 'https://toolport.example';

describe('an HTTP tool upstream called for a user', () => {
  let issuer: TestIssuer;
  let upstream: Server;
  let app: FastifyInstance;
  const seen: { headers: Record<string, unknown>; body: string }[] = [];

  beforeAll(async () => {
    issuer = await startIssuer();
    upstream = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        seen.push({ headers: request.headers, body });
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'toolport-passthrough-')), 'tools.yaml');
    await writeFile(
      file,
      [
        'http:',
        '  - name: recorder',
        '    description: Records what it receives.',
        '    parameters: {type: object, properties: {note: {type: string}}}',
        `    endpoint: {url: "${url}/plain"}`,
        '  - name: recorder_keyed',
        '    description: Records what it receives, with its own key.',
        '    parameters: {type: object, properties: {note: {type: string}}}',
        `    endpoint: {url: "${url}/keyed", headers: {Authorization: "Bearer upstream-own-key"}}`,
      ].join('\n'),
    );
    app = await makeApp('memory', { env: { TOOLS_FILE: file, AUTH_ISSUER: issuer.issuer, PUBLIC_URL } });
  });
  afterAll(async () => {
    await app.close();
    await issuer.close();
    await new Promise((resolve) => upstream.close(resolve));
  });

  it('never receives the caller token, over HTTP invoke or /mcp', async () => {
    const token = await issuer.sign({ sub: 'alice', aud: `${PUBLIC_URL}/mcp` });
    const headers = { authorization: `Bearer ${token}` };
    expect((await post(app, { name: 'recorder', arguments: { note: 'a' } }, headers)).body.success).toBe(true);
    expect((await post(app, { name: 'recorder_keyed', arguments: { note: 'b' } }, headers)).body.success).toBe(true);
    const mcp = await post(
      app,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'recorder', arguments: { note: 'c' } } },
      { ...headers, accept: 'application/json, text/event-stream' },
      '/mcp',
    );
    expect(mcp.body.result.isError).toBe(false);
    expect(seen).toHaveLength(3);
    const signature = token.split('.')[2]!;
    for (const request of seen) {
      expect(JSON.stringify(request)).not.toContain(signature);
      expect(JSON.stringify(request)).not.toContain(token.split('.')[1]!);
    }
    expect(seen[0]!.headers.authorization).toBeUndefined();
    expect(seen[1]!.headers.authorization).toBe('Bearer upstream-own-key');
    expect(seen[2]!.headers.authorization).toBeUndefined();
  });
});
