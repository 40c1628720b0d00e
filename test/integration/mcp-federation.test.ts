/**
 * Federation: an upstream MCP server's resources, resource templates, prompts, completions and
 * subscriptions served through toolport's /mcp under the source's namespace, with
 * server-everything over stdio and over Streamable HTTP, read by the official SDK clients (v1 and
 * v2); an MCP Apps server (ext-apps) whose tool keeps a working ui:// link, hidden with its tool;
 * and a 2026-07-28-only server, spoken to statelessly, whose questions reach toolport's caller.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../../support/children.ts';
import { EVERYTHING, makeMcpApp, startEverythingHttp, startMcpHttp, stdioServer } from '../helpers/mcp-upstreams.ts';
import { until } from '../helpers/tasks.ts';

const APPS = fileURLToPath(new URL('../fixtures/mcp/apps-server.mjs', import.meta.url));
const STATELESS = fileURLToPath(new URL('../fixtures/mcp/stateless-server.mjs', import.meta.url));
const INFO = { name: 'toolport-test', version: '1.0.0' };
const PREFIX = 'toolport://everything/';

async function v1(url: URL, headers: Record<string, string> = {}): Promise<ClientV1> {
  const client = new ClientV1(INFO);
  await client.connect(new TransportV1(url, { requestInit: { headers } }));
  return client;
}

describe.each(['stdio', 'Streamable HTTP'] as const)('server-everything over %s, federated', (transport) => {
  let app: FastifyInstance;
  let url: URL;
  beforeAll(async () => {
    const entry = transport === 'stdio' ? stdioServer('everything', EVERYTHING) : { source: 'everything', url: (await startEverythingHttp()).url };
    app = await makeMcpApp('redis', [entry]);
    url = new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' }));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await stopAll();
  });

  it('lists and reads its resources and templates under toolport://everything/, with an SDK v1 client', async () => {
    const client = await v1(url);
    try {
      const { resources } = await client.listResources();
      const document = resources.find((r) => r.uri.startsWith(`${PREFIX}demo://resource/static/document/`));
      expect(document).toMatchObject({ name: expect.stringMatching(/^everything_/) });
      const read = await client.readResource({ uri: document!.uri });
      expect(read.contents[0]).toMatchObject({ uri: document!.uri });
      const { resourceTemplates } = await client.listResourceTemplates();
      const text = resourceTemplates.find((t) => t.uriTemplate.startsWith(`${PREFIX}demo://resource/dynamic/text/`))!;
      const uri = text.uriTemplate.replace(/\{[^}]+\}/, '7');
      const dynamic = await client.readResource({ uri });
      expect(dynamic.contents).toEqual([expect.objectContaining({ uri, text: expect.stringContaining('7') })]);
      const ids = await client.complete({ ref: { type: 'ref/resource', uri: text.uriTemplate }, argument: { name: 'resourceId', value: '1' } });
      expect(ids.completion.values.length).toBeGreaterThan(0);
      expect(ids.completion.values.every((v) => v.startsWith('1'))).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('gets its prompts with arguments and completes their arguments', async () => {
    const client = await v1(url);
    try {
      const { prompts } = await client.listPrompts();
      expect(prompts.find((p) => p.name === 'everything_args-prompt')?.arguments).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'city', required: true })]),
      );
      const prompt = await client.getPrompt({ name: 'everything_args-prompt', arguments: { city: 'Lisbon', state: 'Lisboa' } });
      expect(JSON.stringify(prompt.messages)).toContain('Lisbon');
      const completed = await client.complete({
        ref: { type: 'ref/prompt', name: 'everything_completable-prompt' },
        argument: { name: 'department', value: 'E' },
      });
      expect(completed.completion.values).toContain('Engineering');
    } finally {
      await client.close();
    }
  });

  it("relays a subscription: the server's update reaches the subscribing client", async () => {
    const client = await v1(url);
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    try {
      const { resources } = await client.listResources();
      const uri = resources.find((r) => r.uri.startsWith(PREFIX))!.uri;
      await client.subscribeResource({ uri });
      await client.callTool({ name: 'everything_toggle-subscriber-updates', arguments: {} });
      await until('the update arrives', () => (updated.includes(uri) ? true : null));
      await client.callTool({ name: 'everything_toggle-subscriber-updates', arguments: {} });
    } finally {
      await client.close();
    }
  });

  it('serves the same to an SDK v2 client in 2026-07-28', async () => {
    const client = new ClientV2(INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new TransportV2(url));
    try {
      const { resources } = await client.listResources();
      expect(resources.some((r) => r.uri.startsWith(PREFIX))).toBe(true);
      const prompt = await client.getPrompt({ name: 'everything_simple-prompt', arguments: {} });
      expect(prompt.messages.length).toBeGreaterThan(0);
      const read = await client.readResource({ uri: `${PREFIX}demo://resource/dynamic/text/3` });
      expect(read.contents[0]).toMatchObject({ uri: `${PREFIX}demo://resource/dynamic/text/3` });
    } finally {
      await client.close();
    }
  });
});

describe('an MCP Apps server, federated', () => {
  const SECRETS = { all: 'apps-all-secret', plain: 'apps-plain-secret' };
  const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
  const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
  let app: FastifyInstance;
  let url: URL;
  beforeAll(async () => {
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'toolport-apps-keys-')), 'keys.json');
    await writeFile(
      file,
      JSON.stringify([
        { id: 'all', key_sha256: sha(SECRETS.all), tools: ['*'] },
        { id: 'plain', key_sha256: sha(SECRETS.plain), tools: ['apps_plain'] },
      ]),
    );
    app = await makeMcpApp('redis', [stdioServer('apps', APPS)], { env: { API_KEYS_FILE: file } });
    url = new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' }));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await stopAll();
  });

  it("keeps the tool's ui:// link working: resources/read returns the HTML with its CSP", async () => {
    const client = await v1(url, bearer(SECRETS.all));
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === 'apps_show_weather')!;
      const link = (tool._meta as { ui: { resourceUri: string } }).ui.resourceUri;
      expect(link).toBe('toolport://apps/ui://weather/view.html');
      const { contents } = await client.readResource({ uri: link });
      expect(contents[0]).toMatchObject({
        uri: link,
        mimeType: 'text/html;profile=mcp-app',
        text: expect.stringContaining('<h1>Weather</h1>'),
        _meta: { ui: { csp: { connectDomains: ['https://api.weather.example'], resourceDomains: ['https://cdn.weather.example'] } } },
      });
      const called = await client.callTool({ name: 'apps_show_weather', arguments: { city: 'Porto' } });
      expect(called.content).toEqual([expect.objectContaining({ text: 'Sunny in Porto.' })]);
    } finally {
      await client.close();
    }
  });

  it('hides the interface of a tool an access rule hides', async () => {
    const client = await v1(url, bearer(SECRETS.plain));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['apps_plain']);
      expect((await client.listResources()).resources).toEqual([]);
      await expect(client.readResource({ uri: 'toolport://apps/ui://weather/view.html' })).rejects.toMatchObject({ code: -32002 });
    } finally {
      await client.close();
    }
  });
});

describe('a pinned source', () => {
  afterAll(() => stopAll());

  it('withholds a resource whose definition changed since it was pinned, and serves it again when the server goes back', async () => {
    const prefix = `test:${Date.now().toString(36)}:`;
    const listed = async (description: string) => {
      const entry = stdioServer('apps', APPS, { pin: true, env: { VIEW_DESCRIPTION: description } });
      const app = await makeMcpApp('redis', [entry], { env: { KEY_PREFIX: prefix } });
      try {
        const client = await v1(new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' })));
        const { resources } = await client.listResources();
        await client.close();
        return resources.map((r) => `${r.uri} ${r.description}`);
      } finally {
        await app.close();
      }
    };
    expect(await listed('first')).toEqual(['toolport://apps/ui://weather/view.html first']);
    expect(await listed('changed')).toEqual([]);
    expect(await listed('first')).toEqual(['toolport://apps/ui://weather/view.html first']);
  }, 60_000);
});

describe('a 2026-07-28-only upstream (it refuses initialize)', () => {
  let app: FastifyInstance;
  let url: URL;
  beforeAll(async () => {
    const { url: upstream } = await startMcpHttp('stateless-server', STATELESS);
    app = await makeMcpApp('redis', [{ source: 'modern', url: upstream }]);
    url = new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' }));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await stopAll();
  });

  it('serves its tools, resources and prompts, spoken to statelessly', async () => {
    const client = await v1(url);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).filter((name) => name.startsWith('modern_'));
      expect(names.sort()).toEqual(['modern_add', 'modern_book']);
      expect((await client.callTool({ name: 'modern_add', arguments: { a: 2, b: 3 } })).content).toEqual([{ type: 'text', text: '5' }]);
      const { contents } = await client.readResource({ uri: 'toolport://modern/menu://today' });
      expect(contents).toEqual([{ uri: 'toolport://modern/menu://today', mimeType: 'text/plain', text: 'Soup of the day: leek.' }]);
      const prompt = await client.getPrompt({ name: 'modern_order', arguments: { dish: 'soup' } });
      expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'One soup, please.' } }]);
    } finally {
      await client.close();
    }
  });

  it("relays its input_required to a 2026-07-28 caller under toolport's own state, and completes", async () => {
    const client = new ClientV2(INFO, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    await client.connect(new TransportV2(url));
    try {
      const answer = await client.callTool({ name: 'modern_book', arguments: { day: 'Friday' } });
      expect(asked).toEqual([expect.objectContaining({ message: 'Whose name is the table under?' })]);
      expect(answer.content).toEqual([{ type: 'text', text: 'Booked Friday for Ada.' }]);
    } finally {
      await client.close();
    }
  });
});
