/**
 * Approvals asked of the person at a handshake-era MCP client (the official SDK v1 client, unchanged):
 * a client that declared elicitation at initialize gets `elicitation/create` inside the held
 * `tools/call` and its answer decides; a client that did not reads the approval id in the error.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, STORES } from '../helpers/app.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';
import { bearer } from '../helpers/keys.ts';

type Answer = (request: { params: Record<string, unknown> }, requestId: string | number) => ElicitResult | Promise<ElicitResult>;

describe.each(STORES)('approvals asked by elicitation/create (SDK v1 client, %s store)', (kind) => {
  let app: FastifyInstance;
  let fx: PolicyFixture;
  let url: URL;
  const clients: Client[] = [];
  beforeAll(async () => {
    fx = await policyFixture();
    app = await makeApp(kind, { env: fx.env, register: fx.register });
    url = new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' }));
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await app?.close();
  });

  /** A connected SDK v1 client; with `answer`, it declares elicitation and answers each form with it. */
  async function connect(answer?: Answer, protocolVersion?: string): Promise<{ client: Client; asked: Record<string, unknown>[] }> {
    const client = new Client({ name: 'approver', version: '1.0.0' }, { capabilities: answer === undefined ? {} : { elicitation: {} } });
    const asked: Record<string, unknown>[] = [];
    if (answer !== undefined)
      client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        asked.push(request.params);
        return answer(request, extra.requestId);
      });
    // An older client: its initialize asks for `protocolVersion` (the SDK itself always asks for its newest).
    const older: typeof fetch = (input, init) => {
      const body = typeof init?.body === 'string' ? init.body.replace(/"protocolVersion":"[0-9-]+"/, `"protocolVersion":"${protocolVersion}"`) : init?.body;
      return fetch(input, { ...init, body });
    };
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers: bearer(fx.keys.agent) },
      ...(protocolVersion !== undefined && { fetch: older }),
    });
    await client.connect(transport);
    clients.push(client);
    return { client, asked };
  }

  const approvalIdOf = (text: string) => /approval ([0-9a-f-]{36})/.exec(text)?.[1];

  it('asks with a form inside the call, and runs the call once when the person accepts', async () => {
    const { client, asked } = await connect(() => ({ action: 'accept', content: { approve: true, note: 'fine by me' } }));
    const before = fx.runs.get('payments_refund') ?? 0;
    const result = await client.callTool({ name: 'payments_refund', arguments: { order: 'el-1', amount: 2500 } });
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toMatch(/refunded 2500/);
    expect(fx.runs.get('payments_refund')).toBe(before + 1);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      message: expect.stringMatching(/payments_refund.*approval [0-9a-f-]{36}/),
      requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' }, note: { type: 'string' } }, required: ['approve'] },
    });
    const id = approvalIdOf(String(asked[0]!.message))!;
    const record = await get(app, `/approvals/${id}`, bearer(fx.keys.ops));
    expect(record.body).toMatchObject({ status: 'executed', decision: { by: 'client:agent', note: 'fine by me' } });
    // The same call again replays the recorded result, and asks nobody.
    const again = await client.callTool({ name: 'payments_refund', arguments: { order: 'el-1', amount: 2500 } });
    expect(again.isError).toBeFalsy();
    expect(fx.runs.get('payments_refund')).toBe(before + 1);
    expect(asked).toHaveLength(1);
  });

  it.each([
    ['declines', { action: 'decline' }],
    ['cancels', { action: 'cancel' }],
    ['answers approve: false', { action: 'accept', content: { approve: false, note: 'too much' } }],
  ] as const)('answers approval_denied and runs nothing when the person %s', async (_how, answer) => {
    const { client, asked } = await connect(() => answer as ElicitResult);
    const before = fx.runs.get('payments_refund') ?? 0;
    const result = await client.callTool({ name: 'payments_refund', arguments: { order: `el-deny-${_how}`, amount: 5000 } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/declined/);
    expect(fx.runs.get('payments_refund') ?? 0).toBe(before);
    const record = await get(app, `/approvals/${approvalIdOf(String(asked[0]!.message))}`, bearer(fx.keys.ops));
    expect(record.body.status).toBe('denied');
  });

  it('names the form mode to a 2025-11-25 client and not to a 2025-06-18 one', async () => {
    const newer = await connect(() => ({ action: 'decline' }));
    await newer.client.callTool({ name: 'payments_refund', arguments: { order: 'el-mode-1', amount: 2500 } });
    expect(newer.asked[0]).toMatchObject({ mode: 'form' });
    const older = await connect(() => ({ action: 'accept', content: { approve: true } }), '2025-06-18');
    const before = fx.runs.get('payments_refund') ?? 0;
    const result = await older.client.callTool({ name: 'payments_refund', arguments: { order: 'el-mode-2', amount: 2500 } });
    expect(older.asked).toHaveLength(1);
    expect(older.asked[0]!.mode).toBeUndefined();
    expect(result.isError).toBeFalsy();
    expect(fx.runs.get('payments_refund')).toBe(before + 1);
  });

  it("ignores another caller's answer to the form: only the asked client decides", async () => {
    const forged = async (id: string | number) => {
      const response = await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'content-type': 'application/json', ...bearer(fx.keys.stranger) },
        payload: JSON.stringify({ jsonrpc: '2.0', id, result: { action: 'accept', content: { approve: true } } }),
      });
      expect(response.statusCode).toBe(202);
    };
    let pendingAfterForgery: unknown;
    const { client, asked } = await connect(async (request, requestId) => {
      await forged(requestId);
      await forged(`${String(requestId)}x`);
      pendingAfterForgery = (await get(app, `/approvals/${approvalIdOf(String(request.params.message))}`, bearer(fx.keys.ops))).body.status;
      return { action: 'decline' };
    });
    const before = fx.runs.get('payments_refund') ?? 0;
    const result = await client.callTool({ name: 'payments_refund', arguments: { order: 'el-forged', amount: 2500 } });
    expect(asked).toHaveLength(1);
    expect(pendingAfterForgery).toBe('pending');
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/declined/);
    expect(fx.runs.get('payments_refund') ?? 0).toBe(before);
  });

  it('answers an isError result naming the approval to a client without elicitation, and runs nothing', async () => {
    const { client } = await connect();
    const before = fx.runs.get('payments_refund') ?? 0;
    const result = await client.callTool({ name: 'payments_refund', arguments: { order: 'el-none', amount: 2500 } });
    expect(result.isError).toBe(true);
    const id = approvalIdOf(JSON.stringify(result.content));
    expect(id).toBeDefined();
    expect((await get(app, `/approvals/${id}`, bearer(fx.keys.ops))).body.status).toBe('pending');
    expect(fx.runs.get('payments_refund') ?? 0).toBe(before);
  });

  it('does not ask the client when the rule does not name client as an approver', async () => {
    const { client, asked } = await connect(() => ({ action: 'accept', content: { approve: true } }));
    const result = await client.callTool({ name: 'send_letter', arguments: { order: 'el-letter', amount: 10 } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/approval [0-9a-f-]{36}/);
    expect(asked).toHaveLength(0);
    expect(fx.runs.get('send_letter') ?? 0).toBe(0);
  });
});
