/**
 * Secrets never reach the model (docs/operations.md#secrets-never-reach-the-model): a plugin that
 * echoes the caller's vault token, one that throws it, an HTTP upstream that echoes its `${VAR}`
 * header, and a tool that returns the caller's API key. In each, the secret is absent from the
 * answer, its replay, the session's events, the console's feed, the log, the spans a real OTLP
 * receiver gets, and every key of the test's prefix in the real Redis; `[redacted:<name>]` is there.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { flushTracing, stopTracing } from '../../src/tracing/index.ts';
import { get, makeApp } from '../helpers/app.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';
import { OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { collectLogs, expectNoSecretsIn } from '../helpers/secrets-scan.ts';
import { startNodeServer, type NodeServer } from '../helpers/upstreams.ts';

const VAULT_TOKEN = `vault-${randomUUID()}`;
const VARIABLE = `TP_REDACTION_UPSTREAM_KEY_${randomBytes(4).toString('hex').toUpperCase()}`;
const UPSTREAM_KEY = `upstream-${randomUUID()}`;
const PREFIX = `test:redact:${randomUUID().slice(0, 8)}:`;

function register(agentKey: () => string) {
  return (registry: SourceRegistry) => {
    registry.registerTool({
      name: 'echo_vault_token',
      description: "Echoes the caller's vault token, as a careless plugin would.",
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      credentials: ['vault_token'],
      idempotency: { strategy: 'auto' },
      handler: async (_params, context) => {
        const token = await context.credentials.get('vault_token');
        return ok({ token, header: `Bearer ${token}` }, `your token is ${token}`);
      },
    });
    registry.registerTool({
      name: 'throw_vault_token',
      description: 'Throws an error whose text holds the vault token.',
      parameters: { type: 'object', properties: {} },
      credentials: ['vault_token'],
      handler: async (_params, context) => {
        throw new Error(`the upstream refused the token ${await context.credentials.get('vault_token')}`);
      },
    });
    registry.registerTool({
      name: 'leak_api_key',
      description: "Returns the caller's API key, as an upstream reflecting its Authorization header would.",
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      idempotency: { strategy: 'auto' },
      handler: () => ok({ key: agentKey() }, `the key is ${agentKey()}`),
    });
  };
}

describe('secrets in results, on Redis with tracing', () => {
  let receiver: OtlpReceiver;
  let upstream: NodeServer;
  let keys: TestKeys;
  let app: FastifyInstance;
  let base: string;
  const logs = collectLogs();
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const answers: string[] = [];

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
    process.env[VARIABLE] = UPSTREAM_KEY;
    upstream = await startNodeServer((req, res) => {
      const header = String(req.headers['x-api-key']);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ message: `you sent ${header}`, value: { echoed: header } }));
    });
    keys = await testKeys(['*']);
    const toolsFile = path.join(await mkdtemp(path.join(tmpdir(), 'toolport-redaction-')), 'tools.json');
    await writeFile(
      toolsFile,
      JSON.stringify({
        credentials: { vault_token: { type: 'secret' } },
        http: [
          {
            name: 'echo_upstream_key',
            description: 'An upstream that echoes the key toolport sends it',
            parameters: { type: 'object', properties: { n: { type: 'integer' } } },
            idempotency: { strategy: 'auto' },
            endpoint: { url: `${upstream.url}/echo`, headers: { 'X-Api-Key': `\${${VARIABLE}}` } },
          },
        ],
      }),
    );
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      TOOLPORT_TRACE_ARGUMENTS: 'true',
      TOOLS_FILE: toolsFile,
      API_KEYS_FILE: keys.file,
      PUBLIC_URL: 'http://toolport.test',
      SECRETS_KEY: randomBytes(32).toString('hex'),
      KEY_PREFIX: PREFIX,
      LOG_LEVEL: 'debug',
    };
    app = await makeApp('redis', { env, logger: logs.logger, register: register(() => keys.agent) });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const put = await app.inject({
      method: 'PUT',
      url: '/me/credentials/vault_token',
      headers: { ...bearer(keys.agent), 'content-type': 'application/json' },
      payload: { value: VAULT_TOKEN },
    });
    expect(put.statusCode).toBe(204);
  });
  afterAll(async () => {
    await app?.close();
    await stopTracing();
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    delete process.env[VARIABLE];
    await receiver?.close();
    await upstream?.stop();
  });

  /** Over a real socket, so that the spans are those of a served request. */
  async function call(name: string, session: string, args: Record<string, unknown> = { n: 1 }) {
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-id': session, ...bearer(keys.agent) },
      body: JSON.stringify({ name, arguments: args }),
    });
    const text = await response.text();
    answers.push(text);
    expect(response.status, text).toBe(200);
    return { text, body: JSON.parse(text) as Record<string, any> };
  }

  it.each([
    ['a plugin echoing the vault token', 'echo_vault_token', 'vault_token', VAULT_TOKEN],
    ['an HTTP upstream echoing its ${VAR} header', 'echo_upstream_key', VARIABLE, UPSTREAM_KEY],
    ['a tool returning the caller API key', 'leak_api_key', 'agent', ''],
  ])('answers %s with [redacted:<name>] in message, value and content, and replays it so', async (_label, tool, name, given) => {
    const secret = given === '' ? keys.agent : given;
    const session = `redact-${randomUUID()}`;
    const first = await call(tool, session);
    expect(first.body.success, first.text).toBe(true);
    expect(first.text).not.toContain(secret);
    expect(first.body.message).toContain(`[redacted:${name}]`);
    expect(JSON.stringify(first.body.value)).toContain(`[redacted:${name}]`);
    expect(first.body.content).toContain(`[redacted:${name}]`);
    const replay = await call(tool, session);
    expect(replay.body.replayed).toBe(true);
    expect(replay.text).not.toContain(secret);
    expect(replay.body.message).toBe(first.body.message);
    const events = await get(app, `/sessions/${session}/events?limit=100`, bearer(keys.agent));
    expect(events.body.events.length).toBe(2); // scanned below, with everything else
    answers.push(events.text);
  });

  it('redacts an error text that holds the token: the answer, the log line of the throw, the span event', async () => {
    const failed = await call('throw_vault_token', `redact-${randomUUID()}`, {});
    expect(failed.body).toMatchObject({ success: false, error: { code: 'handler_error' } });
    expect(failed.text).not.toContain(VAULT_TOKEN);
    expect(failed.body.error.detail).toContain('[redacted:vault_token]');
    expect(logs.text()).toContain('[redacted:vault_token]');
  });

  it('keeps every secret out of the feed, the log, the spans and Redis', async () => {
    // The feed is written in batches: wait for the seven calls.
    let feed = await get(app, '/calls?limit=100', bearer(keys.admin));
    for (let tries = 0; feed.body.calls.length < 7 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      feed = await get(app, '/calls?limit=100', bearer(keys.admin));
    }
    expect(feed.body.calls.length).toBe(7);
    expect(feed.text).toContain('[redacted:');
    await flushTracing();
    const spans = JSON.stringify(receiver.spans);
    expect(spans).toContain('[redacted:vault_token]');
    const seen = [...answers, feed.text, spans, logs.text()].join('\n');
    await expectNoSecretsIn({ log: seen, redisPrefix: PREFIX, expectKeys: '{effect:', secrets: [VAULT_TOKEN, UPSTREAM_KEY, keys.agent] });
  });
});
