/**
 * A user's secret never reaches traces, session events, results or the log (docs/credentials.md), even with
 * call arguments on spans: a real OTLP receiver takes the spans of calls that use a stored secret
 * (sent upstream in a header) and of a call that answers authorization_required.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTracing, stopTracing } from '../../src/tracing/index.ts';
import { get, makeApp } from '../helpers/app.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';
import { OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { collectLogs, expectNoSecretsIn } from '../helpers/secrets-scan.ts';
import { startNodeServer, type NodeServer } from '../helpers/upstreams.ts';

const SECRET = `weather-${randomUUID()}`;

describe('a stored secret, traced calls', () => {
  let receiver: OtlpReceiver;
  let upstream: NodeServer;
  let keys: TestKeys;
  let app: FastifyInstance;
  const received: string[] = [];
  const logs = collectLogs();
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
    upstream = await startNodeServer((req, res) => {
      received.push(String(req.headers['x-api-key']));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ message: 'sunny', value: { ok: true } }));
    });
    keys = await testKeys(['*']);
    const toolsFile = path.join(await mkdtemp(path.join(tmpdir(), 'toolport-vault-traces-')), 'tools.json');
    await writeFile(
      toolsFile,
      JSON.stringify({
        credentials: { weather_key: { type: 'secret' } },
        http: [
          {
            name: 'weather',
            description: 'The weather in a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            endpoint: { url: `${upstream.url}/weather`, headers: { 'X-Api-Key': 'key ${credential.weather_key}' } },
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
      LOG_LEVEL: 'debug',
    };
    app = await makeApp('memory', { env, logger: logs.logger });
    await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await stopTracing();
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    await receiver?.close();
    await upstream?.stop();
  });

  /** Over a real socket, so that the spans are those of a served request. */
  async function call(secret: string, session: string) {
    const { port } = app.server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-id': session, ...bearer(secret) },
      body: JSON.stringify({ name: 'weather', arguments: { city: 'Oslo' } }),
    });
    return { status: response.status, text: await response.text() };
  }

  it('sends the secret upstream, and nowhere else: not in spans, events, answers or the log', async () => {
    const put = await app.inject({
      method: 'PUT',
      url: '/me/credentials/weather_key',
      headers: { ...bearer(keys.agent), 'content-type': 'application/json' },
      payload: { value: SECRET },
    });
    expect(put.statusCode).toBe(204);
    const session = `traced-${randomUUID()}`;
    const used = await call(keys.agent, session);
    expect(JSON.parse(used.text)).toMatchObject({ success: true });
    expect(received).toEqual([`key ${SECRET}`]);
    const missing = await call(keys.admin, `${session}-admin`);
    expect(JSON.parse(missing.text)).toMatchObject({ error: { code: 'authorization_required' } });
    await flushTracing();
    expect(receiver.spans.length).toBeGreaterThan(2);
    expect(receiver.spans.some((span) => span.kind === 3)).toBe(true); // the upstream call's own CLIENT span
    const events = await get(app, `/sessions/${session}/events?limit=100`, bearer(keys.agent));
    expect(events.status).toBe(200);
    expect(events.body.events.length).toBeGreaterThan(0);
    const seen = [JSON.stringify(receiver.spans), events.text, used.text, missing.text, logs.text()].join('\n');
    await expectNoSecretsIn({ log: seen, secrets: [SECRET, keys.agent, keys.admin] });
  });
});
