/**
 * A tool's heartbeat_ms: a handler that keeps calling context.beat() runs as long as its deadline
 * allows; one that goes longer than heartbeat_ms without a beat is aborted as stuck, well before
 * its deadline, and answers deadline_exceeded saying so. Over HTTP and as a task, on each store.
 */
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import { ToolRegistry, type SourceRegistry } from '../../src/tools/registry.ts';
import { pluginSource } from '../../src/tools/source.ts';
import { get, makeApp, post, STORES } from '../helpers/app.ts';
import { ToolDefinitionError } from '../../src/errors.ts';

const HEARTBEAT_MS = 400;
/** When each call's signal aborted, by call id. */
const abortedAt = new Map<string, number>();
/** When each call's handler last beat, by call id. */
const lastBeat = new Map<string, number>();

function register(registry: SourceRegistry): void {
  const parameters = {
    type: 'object',
    properties: { beats: { type: 'integer', minimum: 0 }, then: { type: 'string', enum: ['answer', 'go_silent'] } },
    required: ['beats', 'then'],
  };
  registry.registerTool({
    name: 'beating_worker',
    description: 'Beats every 20 ms for `beats` beats, then answers or goes silent.',
    parameters,
    timeout_ms: 60_000,
    heartbeat_ms: HEARTBEAT_MS,
    handler: async (params, context) => {
      context.signal.addEventListener('abort', () => abortedAt.set(context.callId, Date.now()));
      for (let i = 0; i < (params.beats as number); i++) {
        context.beat();
        lastBeat.set(context.callId, Date.now());
        await sleep(20);
      }
      if (params.then === 'answer') return ok({ beats: params.beats }, 'done');
      // Silent from here on: stuck, as far as anyone can tell.
      await new Promise(() => {});
      return ok(null, 'never');
    },
  });
  registry.registerTool({
    name: 'silent_worker',
    description: 'Works longer than its heartbeat without beating, then answers.',
    parameters: { type: 'object', properties: {} },
    timeout_ms: 60_000,
    heartbeat_ms: HEARTBEAT_MS,
    handler: async (_params, context) => {
      context.signal.addEventListener('abort', () => abortedAt.set(context.callId, Date.now()));
      await sleep(60_000, undefined, { signal: context.signal });
      return ok(null, 'never');
    },
  });
}

describe.each(STORES)('heartbeat_ms (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store, { register });
  });
  afterAll(() => app.close());

  it('lets a handler that keeps beating run past heartbeat_ms', async () => {
    // 60 beats × 20 ms: three times the heartbeat, under a one-minute deadline.
    const { body } = await post(app, { name: 'beating_worker', arguments: { beats: 60, then: 'answer' } });
    expect(body).toMatchObject({ success: true, error: null, value: { beats: 60 } });
  });

  it('aborts a handler that stops beating, long before its deadline, as deadline_exceeded', async () => {
    const id = `stuck-${store}`;
    const begun = Date.now();
    const { body } = await post(app, { id, name: 'beating_worker', arguments: { beats: 5, then: 'go_silent' } });
    expect(body).toMatchObject({ success: false, error: { code: 'deadline_exceeded', detail: `no heartbeat within ${HEARTBEAT_MS} ms: aborted as stuck` } });
    expect(body.message).toContain('stopped making progress');
    expect(abortedAt.get(id)! - lastBeat.get(id)!).toBeGreaterThanOrEqual(HEARTBEAT_MS - 5);
    expect(Date.now() - begun).toBeLessThan(30_000); // the one-minute deadline did not decide it
  });

  it('aborts a handler that never beats, also when it runs as a task', async () => {
    const id = `silent-${store}`;
    const accepted = await post(app, { id, name: 'silent_worker', arguments: {} }, { prefer: 'respond-async' });
    const done = await get(app, `/tasks/${accepted.body.task_id}?wait_ms=30000`);
    // As a task that ran out of time: failed, with the reason.
    expect(done.body).toMatchObject({
      status: 'failed',
      error: { code: 'deadline_exceeded', detail: `no heartbeat within ${HEARTBEAT_MS} ms: aborted as stuck` },
    });
    expect(abortedAt.has(id)).toBe(true);
  });
});

describe('heartbeat_ms in a definition', () => {
  it('must be a positive whole number of milliseconds', () => {
    const registry = new ToolRegistry().of(pluginSource('beats.ts'));
    const tool = { name: 'bad_beat', description: 'x', parameters: { type: 'object', properties: {} }, handler: () => ok(null, 'x') };
    expect(() => registry.registerTool({ ...tool, heartbeat_ms: 0 })).toThrow(ToolDefinitionError);
    expect(() => registry.registerTool({ ...tool, heartbeat_ms: 1.5 })).toThrow(/heartbeat_ms must be a positive whole number/);
    expect(() => registry.registerTool({ ...tool, heartbeat_ms: 100 })).not.toThrow();
  });
});
