/**
 * The credential vault end to end (docs/credentials.md): a real OAuth provider (oidc-provider), a real
 * upstream that checks the bearer token it receives with that provider, two API-key users, on
 * the memory store and on a real Redis.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { buildApp, createLogger } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import { STORES, get, post } from '../helpers/app.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';
import { startTestProvider, TestBrowser, type TestProvider } from '../helpers/oauth-provider.ts';
import { collectLogs, expectNoSecretsIn } from '../helpers/secrets-scan.ts';
import { startNodeServer, type NodeServer } from '../helpers/upstreams.ts';

const PUBLIC_URL = 'http://toolport.test';
const SECRETS_KEY = randomBytes(32).toString('hex');

let provider: TestProvider;
let upstream: NodeServer;
let keys: TestKeys;
let toolsFile: string;
/** The x-api-key values the weather upstream received, in order. */
const weatherKeys: string[] = [];
/** The bearer tokens the whoami upstream received, in order. */
const whoamiTokens: string[] = [];

beforeAll(async () => {
  provider = await startTestProvider({ redirectUris: [`${PUBLIC_URL}/connections/github/callback`], accessTokenTtlS: 2 });
  upstream = await startNodeServer(async (req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/whoami') {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (token !== undefined) whoamiTokens.push(token);
      const subject = token === undefined ? null : await provider.subjectOf(token);
      if (subject === null) {
        res.statusCode = 401;
        res.end(JSON.stringify({ error: 'the bearer token is not valid' }));
        return;
      }
      res.end(JSON.stringify({ message: `you are ${subject}`, value: { subject } }));
      return;
    }
    weatherKeys.push(String(req.headers['x-api-key']));
    res.end(JSON.stringify({ message: 'sunny', value: { ok: true } }));
  });
  keys = await testKeys(['*']);
  const dir = await mkdtemp(path.join(tmpdir(), 'toolport-vault-'));
  toolsFile = path.join(dir, 'tools.json');
  // The client secret comes from a file, as a Docker secret would (<VAR>_FILE).
  await writeFile(path.join(dir, 'client-secret'), `${provider.clientSecret}\n`);
  process.env.GITHUB_CLIENT_SECRET_FILE = path.join(dir, 'client-secret');
  await writeFile(
    toolsFile,
    JSON.stringify({
      credentials: {
        github: {
          type: 'oauth2',
          authorize_url: `${provider.issuer}/auth`,
          token_url: `${provider.issuer}/token`,
          client_id: provider.clientId,
          client_secret: '${GITHUB_CLIENT_SECRET}',
          scopes: ['openid', 'offline_access'],
          issuer: provider.issuer,
        },
        weather_key: { type: 'secret' },
      },
      http: [
        {
          name: 'whoami',
          description: 'Who the upstream thinks you are',
          parameters: { type: 'object', properties: {} },
          endpoint: { url: `${upstream.url}/whoami` },
          auth: { credential: 'github' },
        },
        {
          name: 'weather',
          description: 'The weather',
          parameters: { type: 'object', properties: {} },
          endpoint: { url: `${upstream.url}/weather`, headers: { 'X-Api-Key': 'key=${credential.weather_key}' } },
        },
      ],
    }),
  );
});

afterAll(async () => {
  delete process.env.GITHUB_CLIENT_SECRET_FILE;
  await upstream?.stop();
  await provider?.stop();
});

afterEach(() => {
  vi.useRealTimers();
  provider.failTokenEndpoint = false;
});

async function vaultApp(kind: 'memory' | 'redis', prefix: string, logs?: Writable): Promise<FastifyInstance> {
  const config = loadConfig({
    LOG_LEVEL: 'debug',
    KEY_PREFIX: prefix,
    TOOLS_FILE: toolsFile,
    API_KEYS_FILE: keys.file,
    PUBLIC_URL,
    SECRETS_KEY,
    ...(kind === 'redis' && { REDIS_URL: inject('redisUrl') }),
  });
  const logger = createLogger(config, logs ?? collectLogs().stream);
  const app = await buildApp({ ...config, toolsFile, apiKeysFile: keys.file }, { logger });
  await app.ready();
  return app;
}

function browserFor(app: FastifyInstance, account: string): TestBrowser {
  return new TestBrowser(account, {
    origin: PUBLIC_URL,
    async get(pathAndQuery, headers) {
      const answer = await app.inject({ method: 'GET', url: pathAndQuery, headers });
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    },
    async post(path, headers, body) {
      const answer = await app.inject({ method: 'POST', url: path, headers, payload: body });
      return { status: answer.statusCode, headers: answer.headers, body: answer.body };
    },
  });
}

/** Continue on a connect link's page: the form POST that spends it. */
function press(app: FastifyInstance, link: string, headers: Record<string, string> = {}) {
  const url = new URL(link);
  return app.inject({
    method: 'POST',
    url: url.pathname,
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ link: url.searchParams.get('link')! }).toString(),
  });
}

const call = (app: FastifyInstance, secret: string, name: string) => post(app, { name, arguments: {} }, bearer(secret));

/** Calls `whoami` as `secret`, connects through the link as `account`, and returns the link used. */
async function connect(app: FastifyInstance, secret: string, account: string): Promise<string> {
  const first = await call(app, secret, 'whoami');
  expect(first.body.error?.code).toBe('authorization_required');
  const link = first.body.authorization.url as string;
  const done = await browserFor(app, account).connect(link);
  expect(done.status, done.body).toBe(200);
  expect(done.body).toContain('github is connected');
  return link;
}

describe.each(STORES)('the credential vault on the %s store', (kind) => {
  // These two move the clock or read memory-only state: they are defined on the memory store only.
  const onMemory: (name: string, body: () => Promise<void>) => void = kind === 'memory' ? (name, body) => it(name, body) : () => undefined;
  let app: FastifyInstance;
  let logs: ReturnType<typeof collectLogs>;
  const prefix = `test:${randomBytes(4).toString('hex')}:`;

  beforeAll(async () => {
    logs = collectLogs();
    app = await vaultApp(kind, prefix, logs.stream);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers authorization_required with a single-use link, then runs the same call with the connected account', async () => {
    const first = await call(app, keys.agent, 'whoami');
    expect(first.status).toBe(200);
    expect(first.body.success).toBe(false);
    expect(first.body.error.code).toBe('authorization_required');
    expect(first.body.authorization.credential).toBe('github');
    expect(first.body.authorization.url).toMatch(new RegExp(`^${PUBLIC_URL}/connections/github/start\\?link=[A-Za-z0-9_-]{43}$`));
    expect(first.body.message).toContain(first.body.authorization.url);

    const browser = browserFor(app, 'alice');
    const done = await browser.connect(first.body.authorization.url);
    expect(done.status, done.body).toBe(200);
    const again = await call(app, keys.agent, 'whoami');
    expect(again.body.success, again.body.message).toBe(true);
    expect(again.body.value).toEqual({ subject: 'alice' });

    // The link worked once: its page says so, and Continue is refused.
    const reused = await browserFor(app, 'alice').step(first.body.authorization.url);
    expect(reused.status).toBe(410);
    expect(reused.body).toContain('no longer works');
    const pressed = await press(app, first.body.authorization.url);
    expect(pressed.statusCode).toBe(403);
    expect(pressed.body).toContain('used already');
  });

  it('spends a link only when the person presses Continue: opening it (twice) or a HEAD spends nothing', async () => {
    await app.inject({ method: 'DELETE', url: '/me/connections/github', headers: bearer(keys.agent) });
    const link = (await call(app, keys.agent, 'whoami')).body.authorization.url as string;
    const { pathname, search } = new URL(link);
    const preview = await app.inject({ method: 'HEAD', url: `${pathname}${search}`, headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0' } });
    expect(preview.statusCode).toBe(200);
    const browser = browserFor(app, 'alice');
    for (const _ of [1, 2]) {
      const shown = await browser.step(link);
      expect(shown.status).toBe(200);
      expect(shown.location).toBeNull(); // no sign-in started
      expect(shown.body).toContain('Connect your github account');
      expect(shown.body).toContain('for <strong>agent</strong>');
      expect(shown.body).toMatch(
        /<form method="post" action="http:\/\/toolport\.test\/connections\/github\/start"><input type="hidden" name="link" value="[A-Za-z0-9_-]{43}"><button>Continue<\/button>/,
      );
    }
    expect((await call(app, keys.agent, 'whoami')).body.error?.code).toBe('authorization_required');
    // Continue: the link is spent and the sign-in starts.
    const pressed = await press(app, link);
    expect(pressed.statusCode).toBe(303);
    expect(pressed.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.*[?&]state=/);
    expect((await press(app, link)).statusCode).toBe(403);
    expect((await browser.step(link)).status).toBe(410);
    // A fresh link still connects the account the whole way.
    await connect(app, keys.agent, 'alice');
  });

  it("never runs one user's call with another user's credential", async () => {
    const other = await call(app, keys.admin, 'whoami');
    expect(other.body.error?.code).toBe('authorization_required');
    await connect(app, keys.admin, 'bob');
    expect((await call(app, keys.admin, 'whoami')).body.value).toEqual({ subject: 'bob' });
    expect((await call(app, keys.agent, 'whoami')).body.value).toEqual({ subject: 'alice' });
  });

  it('refuses a link opened by another user (who sent a key), and the link is spent', async () => {
    await app.inject({ method: 'DELETE', url: '/me/connections/github', headers: bearer(keys.agent) });
    const first = await call(app, keys.agent, 'whoami');
    const shown = await browserFor(app, 'mallory').step(first.body.authorization.url, bearer(keys.admin));
    expect(shown.status).toBe(403);
    expect(shown.body).toContain('another user');
    const stolen = await press(app, first.body.authorization.url, bearer(keys.admin));
    expect(stolen.statusCode).toBe(403);
    expect(stolen.body).toContain('another user');
    expect((await browserFor(app, 'alice').step(first.body.authorization.url)).status).toBe(410);
    expect((await press(app, first.body.authorization.url)).statusCode).toBe(403);
    await connect(app, keys.agent, 'alice');
  });

  it('refuses a tampered OAuth state, and a state from another browser', async () => {
    await app.inject({ method: 'DELETE', url: '/me/connections/github', headers: bearer(keys.admin) });
    const link = (await call(app, keys.admin, 'whoami')).body.authorization.url as string;
    const browser = browserFor(app, 'bob');
    const callback = `${PUBLIC_URL}/connections/github/callback`;
    const stopped = await browser.connect(link, {}, callback);
    const url = new URL(stopped.url);
    const state = url.searchParams.get('state')!;
    url.searchParams.set('state', `${state.slice(0, -2)}${state.endsWith('AA') ? 'BB' : 'AA'}`);
    expect((await browser.step(url.href)).status).toBe(403);
    // The real state, but in a browser without the cookie the start set.
    expect((await browserFor(app, 'bob').step(stopped.url)).status).toBe(403);
    // And in its own browser it still completes.
    expect((await browser.step(stopped.url)).status).toBe(200);
    expect((await call(app, keys.admin, 'whoami')).body.value).toEqual({ subject: 'bob' });
  });

  it('stores a secret with PUT /me/credentials and fills it into the header, per user', async () => {
    const missing = await call(app, keys.agent, 'weather');
    expect(missing.body.error.code).toBe('authorization_required');
    expect(missing.body.authorization.credential).toBe('weather_key');
    const put = await app.inject({
      method: 'PUT',
      url: '/me/credentials/weather_key',
      headers: { ...bearer(keys.agent), 'content-type': 'application/json' },
      payload: { value: 'alice-weather-123' },
    });
    expect(put.statusCode).toBe(204);
    const ok = await call(app, keys.agent, 'weather');
    expect(ok.body.success).toBe(true);
    expect(weatherKeys.at(-1)).toBe('key=alice-weather-123');
    expect((await call(app, keys.admin, 'weather')).body.error.code).toBe('authorization_required');
  });

  it("takes a secret through the link's form", async () => {
    const link = (await call(app, keys.admin, 'weather')).body.authorization.url as string;
    const form = await browserFor(app, 'bob').connect(link);
    expect(form.status).toBe(200);
    const state = /name="state" value="([^"]+)"/.exec(form.body)![1]!;
    const saved = await app.inject({
      method: 'POST',
      url: '/connections/weather_key/callback',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ state, value: 'bob-weather-456' }).toString(),
    });
    expect(saved.statusCode).toBe(200);
    expect((await call(app, keys.admin, 'weather')).body.success).toBe(true);
    expect(weatherKeys.at(-1)).toBe('key=bob-weather-456');
    const again = await app.inject({
      method: 'POST',
      url: '/connections/weather_key/callback',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ state, value: 'x' }).toString(),
    });
    expect(again.statusCode).toBe(403);
  });

  it('lists connections with scopes and expiry, never a secret, and forgets one', async () => {
    const listed = await get(app, '/me/connections', bearer(keys.agent));
    expect(listed.status).toBe(200);
    const names = (listed.body.connections as { name: string }[]).map((c) => c.name);
    expect(names).toEqual(['github', 'weather_key']);
    const github = listed.body.connections[0];
    expect(github.scopes).toContain('openid');
    expect(typeof github.expires_at).toBe('string');
    expect(listed.text).not.toContain('alice-weather-123');
    for (const token of provider.issued) expect(listed.text).not.toContain(token);
    expect((await app.inject({ method: 'DELETE', url: '/me/connections/weather_key', headers: bearer(keys.agent) })).statusCode).toBe(204);
    expect((await app.inject({ method: 'DELETE', url: '/me/connections/weather_key', headers: bearer(keys.agent) })).statusCode).toBe(404);
    expect((await call(app, keys.agent, 'weather')).body.error.code).toBe('authorization_required');
    // The audit log (docs/audit.md) names the connection made, the value stored and the one removed.
    await new Promise((resolve) => setTimeout(resolve, 120));
    const audited = (await get(app, '/audit?kind=credential&limit=500', bearer(keys.admin))).body.entries as Record<string, unknown>[];
    const changes = audited.map((entry) => `${entry.caller} ${entry.outcome} ${entry.detail}`);
    expect(changes[0]).toBe('agent disconnected weather_key');
    expect(changes).toEqual(expect.arrayContaining(['agent connected github', 'agent stored weather_key']));
  });

  it('refreshes an access token that is about to expire', async () => {
    const before = provider.refreshes;
    const listed = await get(app, '/me/connections', bearer(keys.agent));
    const expiresAt = Date.parse(listed.body.connections.find((c: { name: string }) => c.name === 'github').expires_at);
    await vi.waitUntil(() => Date.now() >= expiresAt, { timeout: 5000, interval: 50 });
    const after = await call(app, keys.agent, 'whoami');
    expect(after.body.success, after.body.message).toBe(true);
    expect(after.body.value).toEqual({ subject: 'alice' });
    expect(provider.refreshes).toBe(before + 1);
  });

  it('answers authorization_required, not a failure of the service, when the refresh fails', async () => {
    const listed = await get(app, '/me/connections', bearer(keys.admin));
    const expiresAt = Date.parse(listed.body.connections.find((c: { name: string }) => c.name === 'github').expires_at);
    await vi.waitUntil(() => Date.now() >= expiresAt, { timeout: 5000, interval: 50 });
    provider.failTokenEndpoint = true;
    const failed = await call(app, keys.admin, 'whoami');
    expect(failed.status).toBe(200);
    expect(failed.body.error.code).toBe('authorization_required');
    expect(failed.body.authorization.url).toMatch(/^http:\/\/toolport\.test\/connections\/github\/start\?link=/);
  });

  it('keeps no token or secret in plain text in the store or the log', async () => {
    const secrets = [...provider.issued, 'alice-weather-123', 'bob-weather-456'];
    expect(provider.issued.size).toBeGreaterThan(2);
    const log = logs.text();
    expect(log).toContain('credential connected');
    await expectNoSecretsIn({ log, secrets, ...(kind === 'redis' && { redisPrefix: prefix, expectKeys: '{cred:' }) });
  });

  onMemory('hands the link over MCP as a URL-mode elicitation to 2026-07-28 clients that declare it, else in the error text', async () => {
    const rpc = async (capabilities: Record<string, unknown>) => {
      const answer = await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'weather',
          ...bearer(keys.agent),
        },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'weather',
            arguments: {},
            _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities },
          },
        }),
      });
      return answer.json() as Record<string, any>;
    };
    const elicited = (await rpc({ elicitation: { url: {} } })).result;
    expect(elicited.resultType).toBe('input_required');
    const request = elicited.inputRequests.connect_weather_key;
    expect(request.method).toBe('elicitation/create');
    expect(request.params).toMatchObject({ mode: 'url', url: expect.stringMatching(/^http:\/\/toolport\.test\/connections\/weather_key\/start\?link=/) });
    expect(typeof request.params.elicitationId).toBe('string');
    const plain = (await rpc({ elicitation: { form: {} } })).result;
    expect(plain).toMatchObject({ resultType: 'complete', isError: true });
    expect(plain.content[0].text).toMatch(/open this link .* http:\/\/toolport\.test\/connections\/weather_key\/start\?link=/);
  });

  onMemory('refuses a link opened after 10 minutes', async () => {
    const answer = await call(app, keys.agent, 'weather');
    expect(answer.body.error?.code, JSON.stringify(answer.body)).toBe('authorization_required');
    const link = answer.body.authorization.url as string;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 10 * 60_000 + 1000);
    const late = await browserFor(app, 'alice').step(link);
    expect(late.status).toBe(410);
    expect(late.body).toContain('expired');
    const pressed = await press(app, link);
    expect(pressed.statusCode).toBe(403);
    expect(pressed.body).toContain('expired');
  });
});

describe('refresh across replicas', () => {
  it('refreshes once when two replicas sharing Redis need the same token at once, sends only the new token, and keeps both out of Redis and the log', async () => {
    const prefix = `test:${randomBytes(4).toString('hex')}:`;
    const logs = collectLogs();
    const [one, two] = [await vaultApp('redis', prefix, logs.stream), await vaultApp('redis', prefix, logs.stream)];
    try {
      await connect(one, keys.agent, 'carol');
      const before = await call(two, keys.agent, 'whoami');
      expect(before.body.value).toEqual({ subject: 'carol' });
      const old = whoamiTokens.at(-1)!;
      const issuedBefore = new Set(provider.issued);
      const listed = await get(two, '/me/connections', bearer(keys.agent));
      const expiresAt = Date.parse(listed.body.connections[0].expires_at);
      await vi.waitUntil(() => Date.now() >= expiresAt, { timeout: 5000, interval: 50 });
      const refreshes = provider.refreshes;
      const received = whoamiTokens.length;
      const answers = await Promise.all([
        call(one, keys.agent, 'whoami'),
        call(two, keys.agent, 'whoami'),
        call(one, keys.agent, 'whoami'),
        call(two, keys.agent, 'whoami'),
      ]);
      for (const answer of answers) expect(answer.body.value, answer.body.message).toEqual({ subject: 'carol' });
      expect(provider.refreshes).toBe(refreshes + 1);
      // Every call after the refresh sent the one new access token, never the expired one.
      const sent = new Set(whoamiTokens.slice(received));
      expect(sent.size).toBe(1);
      expect(sent.has(old)).toBe(false);
      expect(issuedBefore.has([...sent][0]!)).toBe(false);
      expect(provider.issued.has([...sent][0]!)).toBe(true);
      expect(logs.text()).toContain('credential refreshed');
      await expectNoSecretsIn({ redisPrefix: prefix, expectKeys: '{cred:', log: logs.text(), secrets: [...provider.issued] });
    } finally {
      await one.close();
      await two.close();
    }
  });
});

describe('starting with credentials', () => {
  it('stops with one line when SECRETS_KEY is missing', async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', TOOLS_FILE: toolsFile, PUBLIC_URL });
    await expect(buildApp(config)).rejects.toThrow(/^TOOLS_FILE declares credentials, so SECRETS_KEY must be set/);
  });
});

describe('an MCP server (url:) with auth: {credential}', () => {
  it("sends each user's own token with that user's calls, and answers authorization_required without one", async () => {
    const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const seen: (string | undefined)[] = [];
    const mcpUpstream = await startNodeServer(async (req, res) => {
      const server = new McpServer({ name: 'token-echo', version: '1.0.0' });
      server.registerTool('whoami', { description: 'Who the token says you are' }, async (extra) => {
        const token = /^Bearer (.+)$/.exec(String(extra.requestInfo?.headers.authorization ?? ''))?.[1];
        seen.push(token);
        const subject = token === undefined ? null : await provider.subjectOf(token);
        return { content: [{ type: 'text', text: subject === null ? 'no valid token' : `you are ${subject}` }], isError: subject === null };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close());
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-vault-mcp-'));
    const file = path.join(dir, 'tools.json');
    const base = JSON.parse(await (await import('node:fs/promises')).readFile(toolsFile, 'utf8')) as Record<string, unknown>;
    await writeFile(
      file,
      JSON.stringify({ credentials: base.credentials, mcp: [{ source: 'echo', url: `${mcpUpstream.url}/mcp`, auth: { credential: 'github' } }] }),
    );
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      KEY_PREFIX: `test:${randomBytes(4).toString('hex')}:`,
      TOOLS_FILE: file,
      API_KEYS_FILE: keys.file,
      PUBLIC_URL,
      SECRETS_KEY,
    });
    const app = await buildApp(config);
    await app.ready();
    try {
      const missing = await call(app, keys.agent, 'echo_whoami');
      expect(missing.body.error?.code, JSON.stringify(missing.body)).toBe('authorization_required');
      await browserFor(app, 'dana').connect(missing.body.authorization.url);
      const missingToo = await call(app, keys.admin, 'echo_whoami');
      await browserFor(app, 'erin').connect(missingToo.body.authorization.url);
      const [dana, erin] = await Promise.all([call(app, keys.agent, 'echo_whoami'), call(app, keys.admin, 'echo_whoami')]);
      expect(dana.body.message).toBe('you are dana');
      expect(erin.body.message).toBe('you are erin');
      expect(seen.filter((t) => t !== undefined)).toHaveLength(2);
    } finally {
      await app.close();
      await mcpUpstream.stop();
    }
  });
});
