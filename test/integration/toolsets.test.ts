/**
 * Toolsets (docs/toolsets.md): named subsets of the catalog from the tools file, listed with content
 * hashes, restricting /tools, /tools/invoke and their own MCP endpoints, bound to API keys.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashJson } from '../../src/tools/hash.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { policyFixture } from '../helpers/approvals.ts';
import { bearer } from '../helpers/keys.ts';
import { FLAVOURS, connectMcp } from '../helpers/mcp-client.ts';
import { until } from '../helpers/tasks.ts';

const TOOLS_FILE = `toolsets:
  support:
    description: What the support agent needs.
    tools: ["echo", "fails", "counter"]
  writers:
    tools: ["writes_*", "nothing_like_this_*"]
  finder:
    tools: ["echo", "fails"]
    discovery: search
    always: ["counter"]
  inspector:
    tools: ["echo", "introspect_catalog"]
`;

const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
const MODERN = '2026-07-28';
const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

let folder: string;
let file: string;
let app: FastifyInstance;
const warnings: Record<string, unknown>[] = [];

/** The app on the file, capturing warnings; `echoDescription` changes a member's definition. */
async function start(options: { keysFile?: string; echoDescription?: string } = {}): Promise<FastifyInstance> {
  const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (warnings.push(JSON.parse(String(chunk))), done()) }));
  const started = await makeApp('memory', { env: { TOOLS_FILE: file, ...(options.keysFile && { API_KEYS_FILE: options.keysFile }) }, logger });
  if (options.echoDescription !== undefined) {
    // The source of echo swaps its tools for the same ones with echo's description changed.
    const registry = started.toolport.registry;
    const source = registry.get('echo')!.source;
    const tools = registry.list().filter((t) => t.source === source);
    registry.replaceSource(
      source,
      tools.map((t) => ({
        name: t.name,
        description: t.name === 'echo' ? options.echoDescription! : t.description,
        parameters: t.parameters,
        handler: t.handler,
      })),
    );
  }
  return started;
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'toolport-toolsets-'));
  file = join(folder, 'tools.yaml');
  await writeFile(file, TOOLS_FILE);
  app = await start();
});

afterAll(async () => {
  await app?.close();
  await rm(folder, { recursive: true, force: true });
});

const names = (tools: { name: string }[]) => tools.map((t) => t.name).sort();

describe('toolsets', () => {
  it('lists each toolset with its tools and a hash of their hashes', async () => {
    const { status, body } = await get(app, '/toolsets');
    expect(status).toBe(200);
    const support = body.toolsets.find((t: { name: string }) => t.name === 'support');
    expect(support).toMatchObject({
      name: 'support',
      description: 'What the support agent needs.',
      discovery: 'list',
      tools: expect.arrayContaining(['echo', 'fails', 'counter']),
    });
    const hashes = await Promise.all(support.tools.map(async (name: string) => (await get(app, `/tools/${name}`)).body.hash as string));
    expect(support.hash).toBe(hashJson(hashes.sort()));
    expect(body.toolsets.find((t: { name: string }) => t.name === 'finder').discovery).toBe('search');
  });

  it('has the same hash on another replica, and another once a member changes', async () => {
    const replica = await start();
    const changed = await start({ echoDescription: 'Echoes the text back, changed.' });
    try {
      const hashOf = async (instance: FastifyInstance, name: string) =>
        (await get(instance, '/toolsets')).body.toolsets.find((t: { name: string }) => t.name === name).hash;
      expect(await hashOf(replica, 'support')).toBe(await hashOf(app, 'support'));
      expect(await hashOf(changed, 'support')).not.toBe(await hashOf(app, 'support'));
      expect(await hashOf(changed, 'writers')).toBe(await hashOf(app, 'writers'));
    } finally {
      await Promise.all([replica.close(), changed.close()]);
    }
  });

  it('warns at start of a glob that matches no tool, naming the toolset and the glob', () => {
    const line = warnings.find((w) => w.toolset === 'writers' && w.glob === 'nothing_like_this_*');
    expect(line?.msg).toMatch(/toolset "writers": tools glob "nothing_like_this_\*" matches no tool/);
  });

  it('restricts GET /tools to a toolset in every format, with its own hash', async () => {
    const listed = await get(app, '/tools?toolset=support');
    expect(names(listed.body.tools)).toEqual(['counter', 'echo', 'fails']);
    const toolset = (await get(app, '/toolsets')).body.toolsets.find((t: { name: string }) => t.name === 'support');
    expect(listed.body.hash).toBe(toolset.hash);
    const openai = await get(app, '/tools?toolset=support&format=openai');
    expect(openai.body.tools.map((t: any) => t.function.name).sort()).toEqual(['counter', 'echo', 'fails']);
    expect(openai.headers.etag).not.toBe((await get(app, '/tools?format=openai')).headers.etag);
  });

  it('lists a discovery: search toolset as the search tools and its always tools', async () => {
    const listed = names((await get(app, '/tools?toolset=finder')).body.tools);
    expect(listed).toContain('counter');
    expect(listed).not.toContain('echo');
    expect(listed.filter((n) => n !== 'counter').every((n) => ['tool_search', 'tool_invoke'].includes(n))).toBe(true);
  });

  it('restricts calls to the X-Toolset toolset', async () => {
    const inside = await post(app, { name: 'echo', arguments: { text: 'hi' } }, { 'x-toolset': 'support' });
    expect(inside.body.success).toBe(true);
    const outside = await post(app, { name: 'echo', arguments: { text: 'hi' } }, { 'x-toolset': 'writers' });
    expect(outside.body.error.code).toBe('unknown_tool');
    // A member of a discovery: search toolset is still called directly.
    expect((await post(app, { name: 'echo', arguments: { text: 'hi' } }, { 'x-toolset': 'finder' })).body.success).toBe(true);
  });

  it('answers 404 for a toolset that does not exist, on every route', async () => {
    expect((await get(app, '/tools?toolset=nope')).status).toBe(404);
    expect((await post(app, { name: 'echo', arguments: { text: 'hi' } }, { 'x-toolset': 'nope' })).status).toBe(404);
    const mcp = await app.inject({
      method: 'POST',
      url: '/mcp/nope',
      headers: { 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(mcp.statusCode).toBe(404);
  });
});

describe('tool_search and tool_invoke', () => {
  it('finds only tools of the current toolset, and invokes them through the pipeline', async () => {
    const found = await post(app, { name: 'tool_search', arguments: { query: 'echo the text back' } }, { 'x-toolset': 'finder' });
    expect(found.body.success).toBe(true);
    expect(found.body.value.tools[0]).toMatchObject({ name: 'echo', score: expect.any(Number) });
    expect(found.body.message).toMatch(/echo: Echo the text back/);
    const elsewhere = await post(app, { name: 'tool_search', arguments: { query: 'writes many' } }, { 'x-toolset': 'finder' });
    expect(elsewhere.body.value.tools.map((t: { name: string }) => t.name)).not.toContain('writes_many');
    const echoed = await post(app, { name: 'tool_invoke', arguments: { name: 'echo', arguments: { text: 'via search' } } }, { 'x-toolset': 'finder' });
    expect(echoed.body).toMatchObject({ success: true, value: { text: 'via search' } });
    const invalid = await post(app, { name: 'tool_invoke', arguments: { name: 'echo', arguments: {} } }, { 'x-toolset': 'finder' });
    expect(invalid.body.error.code).toBe('invalid_arguments');
    const outside = await post(app, { name: 'tool_invoke', arguments: { name: 'writes_many', arguments: {} } }, { 'x-toolset': 'finder' });
    expect(outside.body.error.code).toBe('unknown_tool');
  });
});

describe('what a toolset keeps out', () => {
  const ended = async (id: string) => (await get(app, `/tasks/${id}?wait_ms=20000`)).body;

  it('keeps a task started in a toolset inside it: its calls and its tool_invoke', async () => {
    const start = async (body: unknown) => {
      const created = await post(app, body, { 'x-toolset': 'finder', prefer: 'respond-async' });
      expect(created.status).toBe(202);
      return ended(created.body.task_id as string);
    };
    const inside = await start({ name: 'tool_invoke', arguments: { name: 'echo', arguments: { text: 'in a task' } } });
    expect(inside).toMatchObject({ status: 'completed', result: { success: true, value: { text: 'in a task' } } });
    const outside = await start({ name: 'tool_invoke', arguments: { name: 'writes_many', arguments: {} } });
    expect(outside.result.error.code).toBe('unknown_tool');
    expect((await start({ name: 'writes_many', arguments: {} })).result.error.code).toBe('unknown_tool');
  });

  it('keeps a task started over /mcp/{toolset} inside it', async () => {
    const call = async (args: unknown) => {
      const created = await post(
        app,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tool_invoke', arguments: args, task: { ttl: 60_000 } } },
        { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        '/mcp/finder',
      );
      return ended(created.body.result.task.taskId as string);
    };
    expect((await call({ name: 'echo', arguments: { text: 'mcp task' } })).result.success).toBe(true);
    expect((await call({ name: 'writes_many', arguments: {} })).result.error.code).toBe('unknown_tool');
  });

  it('answers 404 from GET /tools/{name} for a tool outside the toolset, as for an unknown tool', async () => {
    expect((await get(app, '/tools/echo?toolset=support')).status).toBe(200);
    expect((await get(app, '/tools/writes_many?toolset=support')).status).toBe(404);
    expect((await get(app, '/tools/writes_many', { 'x-toolset': 'support' })).status).toBe(404);
    expect((await get(app, '/tools/writes_many/versions', { 'x-toolset': 'support' })).status).toBe(404);
    expect((await get(app, '/tools/writes_many')).status).toBe(200);
    expect((await get(app, '/tools/echo?toolset=nope')).status).toBe(404);
  });

  it('lists only the toolset in introspect_catalog', async () => {
    const listed = await post(app, { name: 'introspect_catalog', arguments: {} }, { 'x-toolset': 'inspector' });
    expect(names(listed.body.value.tools)).toEqual(['echo', 'introspect_catalog']);
    expect((await post(app, { name: 'introspect_catalog', arguments: {} })).body.value.tools.length).toBeGreaterThan(2);
  });
});

describe('a task held for an approval in a toolset', () => {
  it('runs, once approved, still inside the toolset (and ends, though the approved call failed)', async () => {
    const rules = [{ tools: ['tool_invoke'], action: 'approve', approvers: ['finance'] }];
    const fx = await policyFixture(rules);
    await writeFile(fx.env.TOOLS_FILE!, stringify({ policy: rules, toolsets: { refunds: { tools: ['payments_*'], discovery: 'search' } } }));
    const held = await makeApp('memory', { env: fx.env, register: fx.register });
    try {
      const start = async (name: string, args: Record<string, unknown>) => {
        const headers = { ...bearer(fx.keys.agent), 'x-toolset': 'refunds', prefer: 'respond-async' };
        const created = await post(held, { name: 'tool_invoke', arguments: { name, arguments: args } }, headers);
        expect(created.status).toBe(202);
        const approval = await until('the approval', async () => {
          const listed = await get(held, '/approvals?status=pending', bearer(fx.keys.finance));
          return (listed.body.approvals as { approval_id: string; arguments: { name: string } }[]).find((a) => a.arguments.name === name)?.approval_id;
        });
        await post(held, { decision: 'approve' }, bearer(fx.keys.finance), `/approvals/${approval}/decision`);
        // Held in input_required until the decision, then run again (resumed) by itself.
        return until('the task to end', async () => {
          const view = (await get(held, `/tasks/${created.body.task_id}?wait_ms=1000`, bearer(fx.keys.agent))).body;
          return view.status === 'completed' || view.status === 'failed' ? view : null;
        });
      };
      expect(await start('wipe_disk', {})).toMatchObject({ status: 'completed', result: { success: false, error: { code: 'unknown_tool' } } });
      expect(fx.runs.get('wipe_disk')).toBeUndefined();
      expect(await start('payments_refund', { order: 'o-1', amount: 5 })).toMatchObject({ status: 'completed', result: { success: true } });
    } finally {
      await held.close();
    }
  });
});

describe('/mcp/{toolset}', () => {
  const rpc = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      payload: JSON.stringify(body),
    });
    return { status: response.statusCode, headers: response.headers, body: response.json() };
  };

  it("lists only the toolset's tools in both eras", async () => {
    const init = await rpc('/mcp/support', {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const session = String(init.headers['mcp-session-id']);
    const handshake = await rpc(
      '/mcp/support',
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(names(handshake.body.result.tools)).toEqual(['counter', 'echo', 'fails']);
    const stateless = await rpc(
      '/mcp/support',
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
    );
    expect(names(stateless.body.result.tools)).toEqual(['counter', 'echo', 'fails']);
    const everything = await rpc(
      '/mcp',
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
    );
    expect(everything.body.result.tools.length).toBeGreaterThan(3);
    const search = await rpc(
      '/mcp/support?discovery=search',
      { jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: envelope } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
    );
    expect(names(search.body.result.tools).every((n) => ['tool_search', 'tool_invoke'].includes(n))).toBe(true);
  });

  it('serves the official clients of every era and refuses tools outside the toolset', async () => {
    const url = new URL('/mcp/support', await app.listen({ port: 0, host: '127.0.0.1' }));
    for (const flavour of FLAVOURS) {
      const client = await connectMcp(flavour, url);
      try {
        const echoed = await client.callTool('echo', { text: flavour });
        expect(echoed.isError ?? false, flavour).toBe(false);
        const refused = await client.callTool('writes_many', {}).catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }));
        expect(refused.isError, flavour).toBe(true);
        expect(JSON.stringify(refused.content), flavour).toMatch(/unknown|not/i);
      } finally {
        await client.close();
      }
    }
  });
});

describe('API keys bound to toolsets', () => {
  let keyed: FastifyInstance;
  const agent = `sk-agent-${randomUUID()}`;
  const auth = { authorization: `Bearer ${agent}` };

  beforeAll(async () => {
    const keysFile = join(folder, 'keys.json');
    await writeFile(keysFile, JSON.stringify([{ id: 'agent', key_sha256: sha(agent), tools: ['*'], toolsets: ['support'] }]));
    keyed = await start({ keysFile });
  });
  afterAll(async () => keyed?.close());

  it('sees and calls only the members of its toolsets, and no other toolset', async () => {
    expect(names((await get(keyed, '/tools', auth)).body.tools)).toEqual(['counter', 'echo', 'fails']);
    expect((await get(keyed, '/toolsets', auth)).body.toolsets.map((t: { name: string }) => t.name)).toEqual(['support']);
    expect((await get(keyed, '/tools?toolset=writers', auth)).status).toBe(404);
    expect((await post(keyed, { name: 'writes_many', arguments: {} }, auth)).body.error.code).toBe('unknown_tool');
    expect((await post(keyed, { name: 'echo', arguments: { text: 'x' } }, auth)).body.success).toBe(true);
    expect((await get(keyed, '/tools/writes_many', auth)).status).toBe(404);
    expect((await get(keyed, '/tools/echo', auth)).status).toBe(200);
  });

  it('refuses to start when a key names a toolset the tools file does not define', async () => {
    const keysFile = join(folder, 'bad-keys.json');
    await writeFile(keysFile, JSON.stringify([{ id: 'agent', key_sha256: sha(agent), tools: ['*'], toolsets: ['ghost'] }]));
    await expect(start({ keysFile })).rejects.toThrow(/key "agent" is bound to toolset "ghost"/);
  });
});
