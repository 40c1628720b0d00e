/** The ledger's admin routes (docs/ledger.md): look up, invalidate by key, by tool, by scope. */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post, STORES } from '../helpers/app.ts';
import { registerLedgerTools, runsOf } from '../helpers/ledger-tools.ts';

describe.each(STORES)('ledger routes (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store, { register: registerLedgerTools });
  });
  afterAll(() => app.close());

  const tag = () => `${store}-${randomUUID().slice(0, 8)}`;
  const call = (name: string, args: Record<string, unknown>, session = `adm-${store}`) => post(app, { name, arguments: args }, { 'x-session-id': session });
  const request = async (method: 'GET' | 'DELETE', url: string) => {
    const response = await app.inject({ method, url });
    return { status: response.statusCode, headers: response.headers, body: response.json() as Record<string, any> };
  };
  const effectUrl = (key: string) => `/ledger/effects/${encodeURIComponent(key)}`;

  it('looks up the longest keys: a 128-character session and a 255-character Idempotency-Key', async () => {
    const session = 's'.repeat(128);
    const header = `k${'x'.repeat(254)}`;
    const result = await post(app, { name: 'charge', arguments: { tag: tag() } }, { 'x-session-id': session, 'idempotency-key': header });
    expect(result.body.idempotency_key.length).toBeGreaterThan(390);
    const { status, body } = await request('GET', effectUrl(result.body.idempotency_key));
    expect(status).toBe(200);
    expect(body.effect_id).toBe(result.body.effect_id);
  });

  it('GET /ledger/effects/{key} answers the ToolEffect record of a result', async () => {
    const t = tag();
    const result = await call('charge', { tag: t, amount: 3 });
    const { status, body } = await request('GET', effectUrl(result.body.idempotency_key));
    expect(status).toBe(200);
    expect(body).toMatchObject({
      effect_id: result.body.effect_id,
      idempotency_key: result.body.idempotency_key,
      tool_name: 'charge',
      params_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      result_message: `charged ${t}`,
      result_value: result.body.value,
      result_success: true,
      tool_hash: result.body.tool_hash,
    });
    const created = Date.parse(body.created_at);
    expect(Date.parse(body.expires_at) - created).toBe(86_400_000);
  });

  it('says expires_at null for a record that never expires, and finds keys holding slashes', async () => {
    const t = `${tag()}/with/slashes`;
    const result = await call('forever', { tag: t });
    expect((await request('GET', effectUrl(result.body.idempotency_key))).body.expires_at).toBeNull();
    const keyed = await post(app, { name: 'forever', arguments: { tag: t } }, { 'idempotency-key': `a/b:${t}` });
    expect((await request('GET', effectUrl(keyed.body.idempotency_key))).body.idempotency_key).toBe(`global:forever:a/b:${t}`);
  });

  it('answers 404 problem for a key with no record', async () => {
    const { status, headers, body } = await request('GET', effectUrl('global:charge:nothing-here'));
    expect(status).toBe(404);
    expect(headers['content-type']).toMatch(/problem\+json/);
    expect(body.type).toBe('urn:toolport:problem:not-found');
    // Not a ledger key at all (every key starts with its scope), e.g. the name of an index.
    expect((await request('GET', effectUrl('s-of-tool:charge'))).status).toBe(404);
    expect((await request('DELETE', effectUrl('s-of-tool:charge'))).status).toBe(404);
  });

  it('DELETE /ledger/effects/{key} invalidates one entry: the next call runs again', async () => {
    const t = tag();
    const first = await call('charge', { tag: t });
    const other = await call('charge', { tag: t, amount: 9 });
    expect(await request('DELETE', effectUrl(first.body.idempotency_key))).toMatchObject({ status: 200, body: { removed: 1 } });
    expect((await request('GET', effectUrl(first.body.idempotency_key))).status).toBe(404);
    expect((await request('DELETE', effectUrl(first.body.idempotency_key))).status).toBe(404);
    expect((await call('charge', { tag: t })).body.replayed).toBe(false);
    expect((await call('charge', { tag: t, amount: 9 })).body.effect_id).toBe(other.body.effect_id);
    expect(runsOf(t)).toBe(3);
  });

  it("DELETE /ledger/tools/{name} invalidates that tool's entries only", async () => {
    const t = tag();
    await call('order', { tag: t, order_id: 'a' });
    await call('order', { tag: t, order_id: 'b' }, 'another-session');
    const kept = await call('charge_global', { tag: t });
    const { status, body } = await request('DELETE', '/ledger/tools/order');
    expect(status).toBe(200);
    expect(body.removed).toBeGreaterThanOrEqual(2);
    expect((await call('order', { tag: t, order_id: 'a' })).body.replayed).toBe(false);
    expect((await call('charge_global', { tag: t })).body.effect_id).toBe(kept.body.effect_id);
    expect(runsOf(t)).toBe(4);
  });

  it('DELETE /ledger?scope= invalidates one scope only', async () => {
    const t = tag();
    const cleared = `clear-${t}`;
    await call('charge', { tag: t }, cleared);
    const kept = await call('charge', { tag: t }, `keep-${t}`);
    expect(await request('DELETE', `/ledger?scope=${encodeURIComponent(`session:${cleared}`)}`)).toMatchObject({ status: 200, body: { removed: 1 } });
    expect((await call('charge', { tag: t }, cleared)).body.replayed).toBe(false);
    expect((await call('charge', { tag: t }, `keep-${t}`)).body.effect_id).toBe(kept.body.effect_id);
  });

  it('refuses DELETE /ledger without a well-formed scope', async () => {
    expect((await request('DELETE', '/ledger')).status).toBe(400);
    expect((await request('DELETE', '/ledger?scope=everything')).body.type).toBe('urn:toolport:problem:invalid-query');
  });
});
