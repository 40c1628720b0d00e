/**
 * Approvals over MCP 2026-07-28 (raw JSON-RPC, multi round-trip requests): the person at a client
 * that declares form elicitation decides through `input_required`; the sealed `requestState` is
 * bound to its caller, call and arguments, used once, and a forged one never runs the tool.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, STORES } from '../helpers/app.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';
import { bearer } from '../helpers/keys.ts';

describe.each(STORES)('approvals over MCP 2026-07-28 (%s store)', (kind) => {
  let app: FastifyInstance;
  let fx: PolicyFixture;
  beforeAll(async () => {
    fx = await policyFixture();
    app = await makeApp(kind, { env: fx.env, register: fx.register });
  });
  afterAll(async () => {
    await app?.close();
  });

  let nextId = 1;
  const call = async (
    args: Record<string, unknown>,
    extra: Record<string, unknown> = {},
    capabilities: Record<string, unknown> = { elicitation: {} },
    secret = fx.keys.agent,
  ) => {
    const answer = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'payments_refund',
        ...bearer(secret),
      },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'tools/call',
        params: {
          name: 'payments_refund',
          arguments: args,
          ...extra,
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities },
        },
      }),
    });
    return answer.json() as Record<string, any>;
  };

  it('asks the person at the client with a form, and runs the call once when the retried call approves it', async () => {
    const args = { order: 'mcp-1', amount: 2500 };
    const asked = (await call(args)).result;
    expect(asked.resultType).toBe('input_required');
    expect(asked.inputRequests.approval).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', requestedSchema: { properties: { approve: { type: 'boolean' }, note: { type: 'string' } } } },
    });
    expect(typeof asked.requestState).toBe('string');
    const before = fx.runs.get('payments_refund') ?? 0;
    const ran = (
      await call(args, { inputResponses: { approval: { action: 'accept', content: { approve: true, note: 'yes' } } }, requestState: asked.requestState })
    ).result;
    expect(ran).toMatchObject({ resultType: 'complete', isError: false });
    expect(fx.runs.get('payments_refund')).toBe(before + 1);
    const replay = await call(args, { inputResponses: { approval: { action: 'accept', content: { approve: true } } }, requestState: asked.requestState });
    expect(replay.error).toMatchObject({ code: -32602 });
    expect(replay.error.message).toMatch(/already used/);
  });

  it('refuses a tampered, mismatched or foreign requestState before anything runs, and a decline denies', async () => {
    const args = { order: 'mcp-2', amount: 3000 };
    const asked = (await call(args)).result;
    const state = asked.requestState as string;
    const respond = { inputResponses: { approval: { action: 'accept', content: { approve: true } } } };
    const before = fx.runs.get('payments_refund') ?? 0;
    const [payload, mac] = state.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), d: 'x' })).toString('base64url');
    expect((await call(args, { ...respond, requestState: `${forged}.${mac}` })).error.message).toMatch(/seal does not verify/);
    expect((await call({ ...args, amount: 3001 }, { ...respond, requestState: state })).error.message).toMatch(/arguments differ/);
    expect((await call(args, { ...respond, requestState: state }, { elicitation: {} }, fx.keys.stranger)).error.message).toMatch(/another caller/);
    expect(fx.runs.get('payments_refund') ?? 0).toBe(before);
    const declined = (await call(args, { inputResponses: { approval: { action: 'decline' } }, requestState: state })).result;
    expect(declined).toMatchObject({ resultType: 'complete', isError: true });
    expect(JSON.stringify(declined.content)).toMatch(/declined/);
    expect(fx.runs.get('payments_refund') ?? 0).toBe(before);
  });

  it('names the approval in an isError result for a client that cannot ask', async () => {
    const answer = (await call({ order: 'mcp-3', amount: 4000 }, {}, {})).result;
    expect(answer).toMatchObject({ resultType: 'complete', isError: true });
    expect(JSON.stringify(answer.content)).toMatch(/approval [0-9a-f-]{36}/);
  });
});
