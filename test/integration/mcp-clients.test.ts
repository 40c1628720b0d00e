/**
 * POST /mcp with the official TypeScript clients, unchanged, against the real listening server:
 * v1 (@modelcontextprotocol/sdk, the handshake era) and v2 (@modelcontextprotocol/client) in its
 * default legacy mode, in `auto` mode and pinned to the stateless revision 2026-07-28.
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, sessionEvents, STORES } from '../helpers/app.ts';
import { until } from '../helpers/tasks.ts';
import { aborted, started } from '../helpers/tools.ts';

/** What every client flavour must do the same way. */
interface McpClient {
  protocolVersion(): string | undefined;
  listTools(): Promise<{ tools: Array<Record<string, any>> }>;
  callTool(name: string, args: unknown, onprogress?: (p: { progress: number; total?: number }) => void, signal?: AbortSignal): Promise<Record<string, any>>;
  /** A request for a method toolport does not serve (roots/list, a client's method; subscriptions/listen in 2026-07-28). */
  unknownMethod(): Promise<unknown>;
  close(): Promise<void>;
}

type Flavour = 'v1' | 'v2 legacy' | 'v2 auto' | 'v2 pinned 2026-07-28';
const FLAVOURS: Flavour[] = ['v1', 'v2 legacy', 'v2 auto', 'v2 pinned 2026-07-28'];

async function connect(flavour: Flavour, url: URL, headers: Record<string, string> = {}): Promise<McpClient> {
  const info = { name: 'toolport-test', version: '1.0.0' };
  if (flavour === 'v1') {
    const client = new ClientV1(info);
    await client.connect(new TransportV1(url, { requestInit: { headers } }));
    return {
      protocolVersion: () => (client.transport as TransportV1 | undefined)?.protocolVersion,
      listTools: () => client.listTools(),
      callTool: (name, args, onprogress, signal) =>
        client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, { ...(onprogress && { onprogress }), ...(signal && { signal }) }),
      unknownMethod: () => client.request({ method: 'roots/list', params: {} }, EmptyResultSchema),
      close: () => client.close(),
    };
  }
  const mode = flavour === 'v2 auto' ? 'auto' : flavour === 'v2 legacy' ? 'legacy' : { pin: '2026-07-28' };
  const client = new ClientV2(info, { versionNegotiation: { mode } });
  await client.connect(new TransportV2(url, { requestInit: { headers } }));
  return {
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    listTools: () => client.listTools(),
    callTool: (name, args, onprogress, signal) =>
      client.callTool({ name, arguments: args as Record<string, unknown> }, { ...(onprogress && { onprogress }), ...(signal && { signal }) }),
    // A method of the client's era that toolport does not serve: subscriptions/listen exists only in 2026-07-28.
    unknownMethod: () =>
      client.request({ method: client.getNegotiatedProtocolVersion() === '2026-07-28' ? 'subscriptions/listen' : 'roots/list', params: {} } as never),
    close: () => client.close(),
  };
}

describe.each(STORES)('MCP with the official clients (%s store)', (store) => {
  let app: FastifyInstance;
  let url: URL;
  beforeAll(async () => {
    app = await makeApp(store);
    url = new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' }));
  });
  afterAll(() => app.close());

  describe.each(FLAVOURS)('%s', (flavour) => {
    const expectedEra = flavour === 'v2 auto' || flavour.startsWith('v2 pinned') ? '2026-07-28' : '2025-11-25';

    it(`connects at protocol version ${expectedEra} and lists every tool with its schemas and hints`, async () => {
      const client = await connect(flavour, url);
      try {
        expect(client.protocolVersion()).toBe(expectedEra);
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        expect(names).toEqual(app.toolport.registry.list().map((t) => t.name));
        const steps = tools.find((t) => t.name === 'steps')!;
        expect(steps.description).toMatch(/reporting progress/);
        expect(steps.inputSchema).toMatchObject({ type: 'object', required: ['n'], additionalProperties: false });
        expect(steps.outputSchema).toMatchObject({ type: 'object', required: ['steps'] });
        expect(steps.annotations).toEqual({ readOnlyHint: true, idempotentHint: true });
        expect(tools.find((t) => t.name === 'echo')!.outputSchema).toBeUndefined();
      } finally {
        await client.close();
      }
    });

    it('calls a tool: the model text as content, the value as structuredContent', async () => {
      const client = await connect(flavour, url);
      try {
        const result = await client.callTool('echo', { text: `hello ${flavour}` });
        expect(result.isError).toBe(false);
        expect(result.content).toEqual([{ type: 'text', text: `echoed\n\n{"text":"hello ${flavour}"}` }]);
        expect(result.structuredContent).toEqual({ text: `hello ${flavour}` });
      } finally {
        await client.close();
      }
    });

    it('answers invalid arguments, an unknown tool and a failing handler as isError results', async () => {
      const client = await connect(flavour, url);
      try {
        const invalid = await client.callTool('echo', { text: 5, extra: true });
        expect(invalid.isError).toBe(true);
        expect(invalid.content[0].text).toMatch(/\/text: must be string/);
        expect(invalid.structuredContent).toBeUndefined();
        const unknown = await client.callTool('no_such_tool', {});
        expect(unknown.isError).toBe(true);
        expect(unknown.content[0].text).toMatch(/Unknown tool "no_such_tool"\. Tools you can call: .*echo/);
        const thrown = await client.callTool('throws', {});
        expect(thrown.isError).toBe(true);
        expect(thrown.content[0].text).toMatch(/^Tool "throws" failed: database exploded/);
        expect(thrown.content[0].text).not.toMatch(/\n\s+at /); // no stack trace
      } finally {
        await client.close();
      }
    });

    it('surfaces a method toolport does not serve as JSON-RPC error -32601', async () => {
      const client = await connect(flavour, url);
      try {
        await expect(client.unknownMethod()).rejects.toMatchObject({ code: -32601 });
        expect((await client.callTool('echo', { text: 'still connected' })).isError).toBe(false);
      } finally {
        await client.close();
      }
    });

    it("delivers the handler's progress reports as progress notifications, then the result", async () => {
      const client = await connect(flavour, url);
      try {
        const seen: { progress: number; total?: number }[] = [];
        const result = await client.callTool('steps', { n: 3 }, (p) => seen.push({ progress: p.progress, total: p.total }));
        expect(result.structuredContent).toEqual({ steps: 3 });
        // Reports closer than the throttle interval may be merged; the last one always arrives.
        expect(seen.length).toBeGreaterThanOrEqual(2);
        expect(seen.every((p, i) => p.total === 3 && (i === 0 || p.progress > seen[i - 1]!.progress))).toBe(true);
        expect(seen.at(-1)).toEqual({ progress: 3, total: 3 });
      } finally {
        await client.close();
      }
    });

    it("cancels the call when the client aborts it (its notifications/cancelled, or the dropped request), aborting the handler's signal", async () => {
      const session = `mcp-cancel-${store}-${flavour.replace(/[^a-z0-9]/g, '')}`;
      const client = await connect(flavour, url, { 'x-session-id': session });
      try {
        const stop = new AbortController();
        const starts = started.size;
        const call = client.callTool('watch_abort', {}, undefined, stop.signal).catch((err: unknown) => err);
        await until('the handler starts', () => started.size > starts);
        const before = aborted.size;
        const sent = Date.now();
        stop.abort('user pressed stop');
        expect(await call).toBeInstanceOf(Error);
        await until('the handler is aborted', () => aborted.size > before);
        expect(aborted.size).toBe(before + 1);
        expect([...aborted.values()].at(-1)! - sent).toBeLessThan(1000);
      } finally {
        await client.close();
      }
      const events = await sessionEvents(app, session);
      expect(events.map((e) => [e.tool, e.error_code])).toEqual([['watch_abort', 'cancelled']]);
    });

    it('keeps a session across calls and connections with X-Session-Id', async () => {
      const session = `mcp-${store}-${flavour.replace(/[^a-z0-9]/g, '')}`;
      const first = await connect(flavour, url, { 'x-session-id': session });
      const setup = await first.callTool('planning_setup_plan', { objective: 'ship', initial_steps: ['test', 'tag'] });
      expect(setup.isError).toBe(false);
      await first.close();
      const second = await connect(flavour, url, { 'x-session-id': session });
      try {
        const read = await second.callTool('planning_read_plan', {});
        expect(read.structuredContent).toMatchObject({
          objective: 'ship',
          steps: [
            { step_id: 1, title: 'test' },
            { step_id: 2, title: 'tag' },
          ],
        });
      } finally {
        await second.close();
      }
      expect((await sessionEvents(app, session)).map((e) => e.tool)).toEqual(['planning_setup_plan', 'planning_read_plan']);
    });
  });

  it("names the session by Mcp-Session-Id when a client sends one (the transports' sessionId option)", async () => {
    const session = `mcp-sid-${store}`;
    // A transport created with a session id skips the handshake and sends Mcp-Session-Id on every request.
    const v1 = new ClientV1({ name: 'toolport-test', version: '1.0.0' });
    await v1.connect(new TransportV1(url, { sessionId: session }));
    expect((await v1.callTool({ name: 'planning_setup_plan', arguments: { objective: 'by mcp session id' } })).isError).toBe(false);
    await v1.close();
    const v2 = new ClientV2({ name: 'toolport-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await v2.connect(new TransportV2(url, { sessionId: session }));
    const read = await v2.callTool({ name: 'planning_read_plan', arguments: {} });
    expect(read.structuredContent).toMatchObject({ objective: 'by mcp session id' });
    await v2.close();
    const plan = await fetch(new URL(`/sessions/${session}/plan`, url));
    expect(await plan.json()).toMatchObject({ objective: 'by mcp session id' });
  });
});
