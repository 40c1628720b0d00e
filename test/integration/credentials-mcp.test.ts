/**
 * Connect links over MCP 2025-11-25 (docs/credentials.md): the official SDK v1 client that declared URL-mode
 * elicitation at initialize gets URLElicitationRequiredError (-32042) naming the connect link as a
 * URL-mode elicitation; the person connects; the same call then runs. Two replicas behind a
 * round-robin balancer share one real Redis, so the declaration is read wherever the call lands.
 * A client that declared only form mode reads the link in the error text.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ErrorCode, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';
import { roundRobin } from '../helpers/mcp-client.ts';
import { collectLogs, expectNoSecretsIn } from '../helpers/secrets-scan.ts';
import { startNodeServer, type NodeServer } from '../helpers/upstreams.ts';

const PUBLIC_URL = 'http://toolport.test';
const SECRET = `weather-${randomUUID()}`;

describe('connect links over MCP 2025-11-25 with the official SDK v1 client', () => {
  let keys: TestKeys;
  let upstream: NodeServer;
  let one: FastifyInstance;
  let two: FastifyInstance;
  let bases: string[];
  const received: string[] = [];
  const prefix = `test:vaultmcp:${randomBytes(4).toString('hex')}:`;
  const logs = collectLogs();

  beforeAll(async () => {
    upstream = await startNodeServer((req, res) => {
      received.push(String(req.headers['x-api-key']));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ message: 'sunny', value: { ok: true } }));
    });
    keys = await testKeys(['*']);
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-vault-mcp-'));
    const toolsFile = path.join(dir, 'tools.json');
    await writeFile(
      toolsFile,
      JSON.stringify({
        credentials: { weather_key: { type: 'secret' } },
        http: [
          {
            name: 'weather',
            description: 'The weather',
            parameters: { type: 'object', properties: {} },
            endpoint: { url: `${upstream.url}/weather`, headers: { 'X-Api-Key': '${credential.weather_key}' } },
          },
        ],
      }),
    );
    const env = {
      TOOLS_FILE: toolsFile,
      API_KEYS_FILE: keys.file,
      PUBLIC_URL,
      SECRETS_KEY: randomBytes(32).toString('hex'),
      KEY_PREFIX: prefix,
      LOG_LEVEL: 'debug',
    };
    one = await makeApp('redis', { env, logger: logs.logger });
    two = await makeApp('redis', { env, logger: logs.logger });
    bases = [await one.listen({ port: 0, host: '127.0.0.1' }), await two.listen({ port: 0, host: '127.0.0.1' })];
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await upstream?.stop();
  });

  async function connectClient(elicitation: Record<string, unknown>, secret: string) {
    const balanced = roundRobin(bases);
    const client = new Client({ name: 'toolport-test', version: '1.0.0' }, { capabilities: { elicitation } });
    const elicited: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      elicited.push(request.params);
      return { action: 'decline' };
    });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', bases[0]), { fetch: balanced.fetch, requestInit: { headers: bearer(secret) } });
    await client.connect(transport);
    expect(transport.protocolVersion).toBe('2025-11-25');
    return { client, elicited, served: balanced.served };
  }

  /** The secret's connect link opened by the person: the page, Continue, the form, then its POST. */
  async function enterSecret(app: FastifyInstance, link: string, value: string): Promise<void> {
    const url = new URL(link);
    const shown = await app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('Continue');
    const form = await app.inject({
      method: 'POST',
      url: url.pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ link: url.searchParams.get('link')! }).toString(),
    });
    expect(form.statusCode).toBe(200);
    const state = /name="state" value="([^"]+)"/.exec(form.body)![1]!;
    const saved = await app.inject({
      method: 'POST',
      url: '/connections/weather_key/callback',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ state, value }).toString(),
    });
    expect(saved.statusCode).toBe(200);
  }

  it('answers URLElicitationRequiredError with the connect link as a URL-mode elicitation, then runs the retried call', async () => {
    const { client, elicited, served } = await connectClient({ url: {} }, keys.agent);
    try {
      const refused = await client.callTool({ name: 'weather', arguments: {} }).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(UrlElicitationRequiredError);
      const error = refused as UrlElicitationRequiredError;
      expect(error.code).toBe(ErrorCode.UrlElicitationRequired);
      expect(error.elicitations).toHaveLength(1);
      const [elicitation] = error.elicitations;
      expect(elicitation).toMatchObject({
        mode: 'url',
        url: expect.stringMatching(new RegExp(`^${PUBLIC_URL}/connections/weather_key/start\\?link=[A-Za-z0-9_-]{43}$`)),
        elicitationId: expect.any(String),
        message: expect.stringContaining('weather_key'),
      });
      expect(elicited).toEqual([]); // nothing was sent to the handler: the error carries the link
      expect(received).toEqual([]); // and the upstream was not called

      await enterSecret(two, elicitation!.url, SECRET);
      const again = await client.callTool({ name: 'weather', arguments: {} });
      expect(again.isError ?? false).toBe(false);
      expect(received).toEqual([SECRET]);
      expect(Math.min(...served)).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('gives a client that declared only form elicitation the link in the error text', async () => {
    const { client, elicited } = await connectClient({ form: {} }, keys.admin);
    try {
      const answer = await client.callTool({ name: 'weather', arguments: {} });
      expect(answer.isError).toBe(true);
      const text = (answer.content as { type: string; text: string }[])[0]!.text;
      expect(text).toMatch(new RegExp(`open this link .*${PUBLIC_URL}/connections/weather_key/start\\?link=`));
      expect(elicited).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("does not take another caller's declaration for its own session", async () => {
    const { client } = await connectClient({ url: {} }, keys.agent);
    try {
      // The admin key names the agent's MCP session: its calls are answered as for a client that declared nothing.
      const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
      const answer = await one.inject({
        method: 'POST',
        url: '/mcp',
        headers: {
          ...bearer(keys.admin),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'mcp-session-id': sessionId,
        },
        payload: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'weather', arguments: {} } },
      });
      const body = answer.json() as Record<string, any>;
      expect(body.error).toBeUndefined();
      expect(body.result.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('keeps the secret out of Redis and the log', async () => {
    await expectNoSecretsIn({ redisPrefix: prefix, expectKeys: '{cred:', log: logs.text(), secrets: [SECRET, keys.agent, keys.admin] });
  });
});
