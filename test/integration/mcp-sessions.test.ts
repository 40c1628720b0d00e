/**
 * The planning suite through the official MCP clients with no configuration (docs/mcp-and-gateways.md, docs/sessions-and-planning.md): two
 * replicas on one Redis behind a round-robin balancer, every request going to the other replica
 * than the one before. Handshake-era clients keep one plan per connection through the
 * Mcp-Session-Id toolport issues; stateless-era clients (2026-07-28) through the session_id the
 * first result names; a gateway that opens a connection per call, through session_id too.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { connectMcp, FLAVOURS, isStateless, roundRobin, type Flavour, type McpTestClient } from '../helpers/mcp-client.ts';

const WHOLE_STEPS = [
  { step_id: 1, title: 'build', status: 'done' },
  { step_id: 2, title: 'test', status: 'in_progress' },
  { step_id: 3, title: 'tag', status: 'pending' },
];

describe('sessions through MCP clients across two replicas (redis)', () => {
  let replicas: FastifyInstance[];
  let bases: string[];
  beforeAll(async () => {
    const env = { KEY_PREFIX: `mcp-sessions-${randomUUID().slice(0, 8)}:` };
    replicas = await Promise.all([makeApp('redis', { env }), makeApp('redis', { env })]);
    bases = await Promise.all(replicas.map((app) => app.listen({ port: 0, host: '127.0.0.1' })));
  });
  afterAll(() => Promise.all(replicas.map((app) => app.close())));

  async function planOf(session: string): Promise<unknown> {
    const response = await fetch(`${bases[1]}/sessions/${session}/plan`);
    return response.status === 200 ? response.json() : null;
  }

  /** setup → add steps → update twice → read, as a model would; session_id only where it was told one. */
  async function planThrough(client: McpTestClient, objective: string, stateless: boolean): Promise<{ session: string; read: Record<string, any> }> {
    const setup = await client.callTool('planning_setup_plan', { objective, initial_steps: ['build'] });
    expect(setup.isError).toBe(false);
    const session = setup.structuredContent.session_id as string;
    // The advice to pass session_id only where the client has no session of its own; the id is always in the value.
    if (stateless) expect(setup.content[0].text).toContain(`pass "session_id": "${session}"`);
    else expect(setup.content[0].text).not.toMatch(/pass "session_id"/);
    const handle = stateless ? { session_id: session } : {};
    const added = await client.callTool('planning_add_step', { steps: ['test', 'tag'], ...handle });
    expect(added.structuredContent).toMatchObject({ steps_total: 3 });
    expect((await client.callTool('planning_update_step', { step_id: 1, status: 'done', ...handle })).isError).toBe(false);
    expect((await client.callTool('planning_update_step', { step_id: 2, status: 'in_progress', ...handle })).isError).toBe(false);
    const read = await client.callTool('planning_read_plan', handle);
    return { session, read };
  }

  describe.each(FLAVOURS)('%s', (flavour: Flavour) => {
    const stateless = isStateless(flavour);

    it(`keeps the whole plan with no custom header (${stateless ? 'session_id from the first result' : 'the Mcp-Session-Id toolport issued'})`, async () => {
      const balancer = roundRobin(bases);
      const client = await connectMcp(flavour, new URL('/mcp', bases[0]), { fetch: balancer.fetch });
      try {
        const { session, read } = await planThrough(client, `ship with ${flavour}`, stateless);
        if (stateless) expect(client.sessionId()).toBeUndefined();
        else expect(client.sessionId()).toBe(session); // the plan is the connection's session
        expect(read.isError).toBe(false);
        expect(read.structuredContent).toMatchObject({ objective: `ship with ${flavour}`, status: 'active', steps: WHOLE_STEPS });
        expect(await planOf(session)).toEqual({ objective: `ship with ${flavour}`, status: 'active', steps: WHOLE_STEPS });
      } finally {
        await client.close();
      }
      // Both replicas served the conversation, in turn.
      expect(Math.min(...balancer.served)).toBeGreaterThanOrEqual(3);
      expect(Math.abs(balancer.served[0]! - balancer.served[1]!)).toBeLessThanOrEqual(1);
    });

    it('gives two clients at once two separate plans', async () => {
      const clients = await Promise.all([0, 1].map(() => connectMcp(flavour, new URL('/mcp', bases[0]), { fetch: roundRobin(bases).fetch })));
      try {
        const [a, b] = await Promise.all(clients.map((client, i) => planThrough(client, `plan ${i} of ${flavour}`, stateless)));
        expect(a!.session).not.toBe(b!.session);
        expect(a!.read.structuredContent).toMatchObject({ objective: `plan 0 of ${flavour}`, steps: WHOLE_STEPS });
        expect(b!.read.structuredContent).toMatchObject({ objective: `plan 1 of ${flavour}`, steps: WHOLE_STEPS });
        expect(await planOf(a!.session)).toMatchObject({ objective: `plan 0 of ${flavour}` });
        expect(await planOf(b!.session)).toMatchObject({ objective: `plan 1 of ${flavour}` });
      } finally {
        await Promise.all(clients.map((client) => client.close()));
      }
    });

    it('uses X-Session-Id when the client sends it, and issues no Mcp-Session-Id then', async () => {
      const session = `mcp-named-${flavour.replace(/[^a-z0-9]/g, '')}-${randomUUID().slice(0, 8)}`;
      const client = await connectMcp(flavour, new URL('/mcp', bases[0]), { fetch: roundRobin(bases).fetch, headers: { 'x-session-id': session } });
      try {
        expect(client.sessionId()).toBeUndefined();
        const setup = await client.callTool('planning_setup_plan', { objective: 'named by the caller' });
        expect(setup.structuredContent).not.toHaveProperty('session_id');
        expect(setup.content[0].text).not.toMatch(/pass "session_id"/);
        expect(await planOf(session)).toMatchObject({ objective: 'named by the caller' });
      } finally {
        await client.close();
      }
    });
  });

  it('keeps the plan through a gateway that opens a new connection (and ends it) for every call', async () => {
    // LiteLLM's MCP client does this: initialize, one call, DELETE, for each tool call.
    // Read by `call` before it is set: the first call runs without a session.
    // eslint-disable-next-line prefer-const
    let session: string | undefined;
    const call = async (name: string, args: Record<string, unknown>) => {
      const client = await connectMcp('v1', new URL('/mcp', bases[0]), { fetch: roundRobin(bases).fetch });
      try {
        return await client.callTool(name, session === undefined ? args : { ...args, session_id: session });
      } finally {
        await client.terminateSession();
        await client.close();
      }
    };
    const setup = await call('planning_setup_plan', { objective: 'through a gateway', initial_steps: ['build'] });
    session = setup.structuredContent.session_id as string;
    await call('planning_add_step', { steps: ['test', 'tag'] });
    await call('planning_update_step', { step_id: 1, status: 'done' });
    await call('planning_update_step', { step_id: 2, status: 'in_progress' });
    const read = await call('planning_read_plan', {});
    expect(read.structuredContent).toMatchObject({ objective: 'through a gateway', steps: WHOLE_STEPS });
    expect(read.content[0].text).not.toMatch(/pass "session_id"/); // named by the model: nothing more to tell
    expect(await planOf(session)).toMatchObject({ objective: 'through a gateway', steps: WHOLE_STEPS });
  });

  it('answers DELETE /mcp with 405 and keeps the session, whose later requests still work on any replica', async () => {
    const client = await connectMcp('v1', new URL('/mcp', bases[0]));
    const session = client.sessionId()!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    await client.callTool('planning_setup_plan', { objective: 'outlives its connection' });
    const deleted = await fetch(`${bases[1]}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': session } });
    expect(deleted.status).toBe(405);
    expect(deleted.headers.get('allow')).toBe('POST');
    expect(((await deleted.json()) as { error: { message: string } }).error.message).toMatch(/SESSION_TTL_S/);
    await client.terminateSession(); // the SDK takes 405 as "the server keeps sessions"
    await client.close();
    expect(await planOf(session)).toMatchObject({ objective: 'outlives its connection' });
    const again = await connectMcp('v1', new URL('/mcp', bases[1]), { sessionId: session });
    try {
      expect((await again.callTool('planning_read_plan', {})).structuredContent).toMatchObject({ objective: 'outlives its connection' });
    } finally {
      await again.close();
    }
  });
});
