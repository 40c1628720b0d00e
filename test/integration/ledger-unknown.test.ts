/**
 * Outcome unknown (docs/ledger.md), the same on both stores: a lease of an `unknown` tool that lapsed
 * without a record (its process died) answers outcome_unknown — to calls and to tasks — is listed,
 * counted once (by the shared sweep or the first call), and settled by an admin.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashJson } from '../../src/tools/hash.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { registerLedgerTools, runsOf } from '../helpers/ledger-tools.ts';
import { until } from '../helpers/tasks.ts';
import { pluginSource } from '../../src/tools/source.ts';

const LEASE_MS = 300;

describe.each(['memory', 'redis'] as const)('outcome unknown (%s)', (kind) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(kind, { register: registerLedgerTools, env: { LEDGER_LEASE_MS: String(LEASE_MS) } });
  });
  afterAll(() => app.close());

  /** A run of charge_global that started and whose process died: its lease, never renewed nor recorded. */
  async function lostRun(tag: string): Promise<string> {
    const params = { tag };
    const key = `global:charge_global:${hashJson(params)}`;
    const begun = await app.toolport.store.ledger.begin({
      key,
      token: `dead-${randomUUID()}`,
      paramsHash: hashJson(params),
      leaseMs: LEASE_MS,
      strictPayload: false,
      tool: 'charge_global',
      scope: 'global',
      onLost: 'unknown',
      effectId: `lost-${tag}`,
      keepS: 60,
    });
    expect(begun.kind).toBe('run');
    return key;
  }

  it('answers outcome_unknown without running, lists and counts it once, and runs or replays once resolved', async () => {
    const tag = `lost-${randomUUID()}`;
    const key = await lostRun(tag);
    // While the lease is live, an identical call waits for it (and gives up at its deadline).
    expect((await post(app, { name: 'charge_global', arguments: { tag } }, { 'x-timeout-ms': '50' })).body.error.code).toBe('in_progress');
    // The shared sweep notices the lapse without any call.
    const listed = await until('the sweep lists it', async () =>
      (await get(app, '/ledger/unknown')).body.unknown.find((u: { idempotency_key: string }) => u.idempotency_key === key),
    );
    expect(listed).toMatchObject({ tool_name: 'charge_global', scope: 'global', effect_id: `lost-${tag}` });
    for (let i = 0; i < 2; i++) {
      const lost = await post(app, { name: 'charge_global', arguments: { tag } });
      expect(lost.body).toMatchObject({ success: false, error: { code: 'outcome_unknown' }, effect_id: `lost-${tag}`, idempotency_key: key });
      expect(lost.body.content).toContain('operator');
    }
    expect(runsOf(tag)).toBe(0);
    expect((await get(app, '/metrics')).text).toMatch(/toolport_ledger_unknown_total\{tool="charge_global"\} 1\n/);

    // A task meeting it ends failed with outcome_unknown.
    const task = await post(app, { name: 'charge_global', arguments: { tag } }, { prefer: 'respond-async' });
    expect(task.status).toBe(202);
    const ended = await until('the task ends', async () => {
      const view = (await get(app, `/tasks/${task.body.task_id}`)).body;
      return view.status === 'failed' || view.status === 'completed' ? view : null;
    });
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'outcome_unknown' } });

    const resolve = (body: unknown) => post(app, body, {}, `/ledger/effects/${encodeURIComponent(key)}/resolve`);
    expect((await resolve({ outcome: 'ran' })).status).toBe(400);
    expect((await resolve({ outcome: 'ran', result: { message: 'charged (checked with the provider)', value: { charge_id: 'ch_1' } } })).body).toEqual({
      resolved: 'ran',
    });
    expect((await post(app, { name: 'charge_global', arguments: { tag } })).body).toMatchObject({
      success: true,
      replayed: true,
      effect_id: `lost-${tag}`,
      value: { charge_id: 'ch_1' },
    });
    expect((await get(app, `/ledger/effects/${encodeURIComponent(key)}`)).body).toMatchObject({ effect_id: `lost-${tag}`, tool_name: 'charge_global' });
    expect((await get(app, '/ledger/unknown')).body.unknown.some((u: { idempotency_key: string }) => u.idempotency_key === key)).toBe(false);
    expect((await resolve({ outcome: 'not_ran' })).status).toBe(404);
    expect(runsOf(tag)).toBe(0);
  });

  it('runs once after "it did not run", and a rerun tool runs again at once', async () => {
    const tag = `not-ran-${randomUUID()}`;
    const key = await lostRun(tag);
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 50));
    expect((await post(app, { name: 'charge_global', arguments: { tag } })).body.error.code).toBe('outcome_unknown');
    expect((await post(app, { outcome: 'not_ran' }, {}, `/ledger/effects/${encodeURIComponent(key)}/resolve`)).body).toEqual({ resolved: 'not_ran' });
    expect((await post(app, { name: 'charge_global', arguments: { tag } })).body).toMatchObject({ success: true, replayed: false });
    expect((await post(app, { name: 'charge_global', arguments: { tag } })).body).toMatchObject({ success: true, replayed: true });
    expect(runsOf(tag)).toBe(1);

    // A lapsed rerun lease (the ledger's former behaviour) is taken over by the next call.
    const rerunTag = `rerun-${randomUUID()}`;
    const params = { tag: rerunTag };
    await app.toolport.store.ledger.begin({
      key: `global:charge_global:${hashJson(params)}`,
      token: 'dead',
      paramsHash: hashJson(params),
      leaseMs: LEASE_MS,
      strictPayload: false,
      tool: 'charge_global',
      scope: 'global',
      onLost: 'rerun',
    });
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 50));
    expect((await post(app, { name: 'charge_global', arguments: params })).body).toMatchObject({ success: true, replayed: false });
    expect(runsOf(rerunTag)).toBe(1);
  });

  it('refuses on_lost without a ledger strategy, or with another value', () => {
    const registry = app.toolport.registry;
    const plugin = registry.of(pluginSource('lost.ts'));
    const base = { description: 'x', parameters: { type: 'object', properties: {} }, handler: () => ({ message: 'ok' }) };
    expect(() => plugin.registerTool({ name: 'lost_without_ledger', on_lost: 'rerun', ...base })).toThrow(/on_lost needs an idempotency strategy/);
    expect(() => plugin.registerTool({ name: 'lost_bad', idempotency: { strategy: 'auto' }, on_lost: 'maybe' as never, ...base })).toThrow(
      /on_lost must be rerun or unknown/,
    );
    plugin.registerTool({ name: 'lost_default', idempotency: { strategy: 'auto' }, annotations: { idempotent: true }, ...base });
    expect(registry.get('lost_default')?.idempotency?.on_lost).toBe('rerun');
    expect(registry.get('charge_global')?.idempotency?.on_lost).toBe('unknown');
  });
});
