/** A call's deadline: the tool's own timeout_ms (longer than DEFAULT_TIMEOUT_MS if it likes), shortened by X-Timeout-Ms. */
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { makeApp, post } from '../helpers/app.ts';

function register(registry: SourceRegistry): void {
  registry.registerTool({
    name: 'slow_but_allowed',
    description: 'Takes 300 ms and says it may take up to 2 s.',
    parameters: { type: 'object', properties: {} },
    timeout_ms: 2000,
    handler: async (_params, context) => {
      await sleep(300, undefined, { signal: context.signal });
      return ok({ done: true }, 'done');
    },
  });
  registry.registerTool({
    name: 'slow_default',
    description: 'Takes 300 ms and sets no limit of its own.',
    parameters: { type: 'object', properties: {} },
    handler: async (_params, context) => {
      await sleep(300, undefined, { signal: context.signal });
      return ok({ done: true }, 'done');
    },
  });
}

describe('deadlines', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp('memory', { env: { DEFAULT_TIMEOUT_MS: '100' }, register });
  });
  afterAll(() => app.close());

  it("lets a tool's own timeout_ms run longer than DEFAULT_TIMEOUT_MS", async () => {
    const { body } = await post(app, { name: 'slow_but_allowed', arguments: {} });
    expect(body).toMatchObject({ success: true, value: { done: true } });
  });

  it('holds a tool without timeout_ms to DEFAULT_TIMEOUT_MS', async () => {
    const { body } = await post(app, { name: 'slow_default', arguments: {} });
    expect(body).toMatchObject({ success: false, error: { code: 'deadline_exceeded' } });
  });

  it("lets X-Timeout-Ms shorten the tool's limit, never lengthen the default", async () => {
    const shortened = await post(app, { name: 'slow_but_allowed', arguments: {} }, { 'x-timeout-ms': '100' });
    expect(shortened.body).toMatchObject({ success: false, error: { code: 'deadline_exceeded' } });
    const lengthened = await post(app, { name: 'slow_default', arguments: {} }, { 'x-timeout-ms': '5000' });
    expect(lengthened.body).toMatchObject({ success: false, error: { code: 'deadline_exceeded' } });
  });
});
