/** A request's log lines: pino's child per request carries `reqId`, and the caller once the key is checked. */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { makeApp, post } from '../helpers/app.ts';
import { bearer, testKeys } from '../helpers/keys.ts';

describe("a request's log lines", () => {
  let app: FastifyInstance;
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));

  beforeAll(async () => {
    const keys = await testKeys(['note']);
    const register = (registry: SourceRegistry) =>
      registry.registerTool({
        name: 'note',
        description: 'Writes one log line.',
        parameters: { type: 'object', properties: {} },
        handler: (_params, context) => {
          context.log.info({ noted: true }, 'noted');
          return ok(null, 'noted');
        },
      });
    app = await makeApp('memory', { env: { API_KEYS_FILE: keys.file }, logger, register });
    for (const [id, secret] of [
      ['req-agent', keys.agent],
      ['req-ops', keys.admin],
    ] as const) {
      const answer = await post(app, { name: 'note', arguments: {} }, { ...bearer(secret), 'x-request-id': id });
      expect(answer.status).toBe(200);
    }
  });
  afterAll(async () => {
    await app?.close();
  });

  it("carry the request's id and its own caller, and leave the root logger as it was", () => {
    // The handler's line: its fields come from the loggers' bindings alone.
    const noted = (reqId: string) => lines.find((line) => line.msg === 'noted' && line.reqId === reqId);
    expect(noted('req-agent')).toMatchObject({ reqId: 'req-agent', caller: 'agent', tool: 'note', noted: true });
    expect(noted('req-ops')).toMatchObject({ reqId: 'req-ops', caller: 'ops', tool: 'note', noted: true });
    expect(logger.bindings()).toEqual({});
  });
});
