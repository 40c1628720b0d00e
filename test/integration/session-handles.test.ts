/**
 * Session handles (docs/sessions-and-planning.md, "Calls without a session"): over real HTTP with no X-Session-Id, the
 * session built-ins start a session, tell the model its id, and take it back as `session_id`, in
 * the native, OpenAI and Anthropic formats; the argument is in every discovery format and the
 * OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, STORES } from '../helpers/app.ts';

type Shape = 'native' | 'openai' | 'anthropic';

/** One tool call as each provider's model writes it. */
function callOf(shape: Shape, id: string, name: string, args: Record<string, unknown>): Record<string, unknown> {
  if (shape === 'openai') return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
  if (shape === 'anthropic') return { type: 'tool_use', id, name, input: args };
  return { id, name, arguments: args };
}

/** The text the model would read back, from the provider-native tool message. */
function modelText(shape: Shape, result: Record<string, any>): string {
  if (shape === 'openai') return result.tool_message.content as string;
  if (shape === 'anthropic') return result.tool_message.content as string;
  return result.content as string;
}

describe.each(STORES)('session handles over HTTP (%s store)', (store) => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await makeApp(store);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  async function invoke(body: unknown, headers: Record<string, string> = {}): Promise<Record<string, any>> {
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, any>;
  }

  async function planOf(session: string): Promise<unknown> {
    const response = await fetch(`${base}/sessions/${session}/plan`);
    return response.status === 200 ? response.json() : null;
  }

  describe.each(['native', 'openai', 'anthropic'] as Shape[])('%s', (shape) => {
    it('starts a session, names it to the model, and keeps the plan when the model passes session_id back', async () => {
      const call = (n: number, name: string, args: Record<string, unknown>) => invoke(callOf(shape, `call_${shape}_${n}`, name, args));
      const setup = await call(1, 'planning_setup_plan', { objective: `ship over ${shape}`, initial_steps: ['build'] });
      expect(setup.success).toBe(true);
      const session = setup.value.session_id as string;
      expect(session).toMatch(/^[0-9a-f-]{36}$/);
      // What the model reads names the id to pass, in its own format's tool message.
      expect(modelText(shape, setup)).toContain(`pass "session_id": "${session}"`);
      const added = await call(2, 'planning_add_step', { steps: ['test', 'tag'], session_id: session });
      expect(added.value).toMatchObject({ steps: [{ step_id: 2 }, { step_id: 3 }], steps_total: 3 });
      expect(added.message).not.toMatch(/pass "session_id"/); // the model named it: nothing to tell
      const updated = await call(3, 'planning_update_step', { step_id: 1, status: 'done', session_id: session });
      expect(updated.value).toMatchObject({ step: { step_id: 1, status: 'done' }, steps_done: 1 });
      const read = await call(4, 'planning_read_plan', { session_id: session });
      const whole = {
        objective: `ship over ${shape}`,
        status: 'active',
        steps: [
          { step_id: 1, title: 'build', status: 'done' },
          { step_id: 2, title: 'test', status: 'pending' },
          { step_id: 3, title: 'tag', status: 'pending' },
        ],
      };
      expect(read.value).toEqual(whole);
      expect(await planOf(session)).toEqual(whole);
      const seen = await call(5, 'introspect_session', { session_id: session });
      expect(seen.value).toMatchObject({ session_id: session, plan: whole, events_total: 4 });
    });

    it('lets X-Session-Id win over the argument', async () => {
      const header = `handle-header-${store}-${shape}`;
      const other = `handle-other-${store}-${shape}`;
      const setup = await invoke(callOf(shape, 'c1', 'planning_setup_plan', { objective: 'pinned', session_id: other }), { 'x-session-id': header });
      expect(setup.success).toBe(true);
      expect(setup.value).not.toHaveProperty('session_id');
      expect(await planOf(header)).toMatchObject({ objective: 'pinned' });
      expect(await planOf(other)).toBeNull();
    });

    it('refuses a session_id that X-Session-Id would refuse, as invalid_arguments', async () => {
      for (const bad of ['bad id!', '', 'x'.repeat(129), 42]) {
        const result = await invoke(callOf(shape, 'c1', 'planning_read_plan', { session_id: bad }));
        expect(result.error?.code).toBe('invalid_arguments');
        expect(result.message).toMatch(/session_id/);
      }
    });
  });

  it('gives two callers without a session two separate plans', async () => {
    const [a, b] = await Promise.all(['first', 'second'].map((objective) => invoke({ name: 'planning_setup_plan', arguments: { objective } })));
    expect(a!.value.session_id).not.toBe(b!.value.session_id);
    expect(await planOf(a!.value.session_id)).toMatchObject({ objective: 'first' });
    expect(await planOf(b!.value.session_id)).toMatchObject({ objective: 'second' });
  });

  it('still fails a plugin tool that needs a session, with guidance, and offers it no session_id', async () => {
    const result = await invoke({ name: 'counter', arguments: {} });
    expect(result).toMatchObject({ success: false, error: { code: 'tool_failed' } });
    expect(result.message).toMatch(/X-Session-Id/);
    expect(app.toolport.registry.get('counter')!.parameters).not.toHaveProperty('properties.session_id');
  });

  it('declares session_id in every discovery format and in the OpenAPI document', async () => {
    const session = ['planning_setup_plan', 'planning_add_step', 'planning_update_step', 'planning_read_plan', 'introspect_session'];
    const pattern = '^[A-Za-z0-9._:-]{1,128}$';
    const schemaOf: Record<string, (tool: Record<string, any>) => Record<string, any>> = {
      native: (t) => t.parameters,
      openai: (t) => t.function.parameters,
      'openai-responses': (t) => t.parameters,
      anthropic: (t) => t.input_schema,
      gemini: (t) => t.parameters,
      mcp: (t) => t.inputSchema,
    };
    for (const [format, schema] of Object.entries(schemaOf)) {
      const listed = (await (await fetch(`${base}/tools?format=${format}`)).json()) as { tools: Record<string, any>[] };
      const flat = format === 'gemini' ? listed.tools.flatMap((t) => t.functionDeclarations) : listed.tools;
      const nameOf = (t: Record<string, any>) => t.name ?? t.function?.name;
      for (const name of session) {
        const property = schema(flat.find((t) => nameOf(t) === name)!).properties.session_id;
        expect(property, `${format} ${name}`).toMatchObject({ type: expect.stringMatching(/^string$/i) });
        if (format !== 'gemini') expect(property.pattern, `${format} ${name}`).toBe(pattern);
        expect(schema(flat.find((t) => nameOf(t) === name)!).required ?? [], `${format} ${name}`).not.toContain('session_id');
      }
      expect(schema(flat.find((t) => nameOf(t) === 'introspect_catalog')!)?.properties ?? {}).not.toHaveProperty('session_id');
    }
    const document = (await (await fetch(`${base}/openapi.json`)).json()) as Record<string, any>;
    for (const name of session) {
      const body = document.paths[`/tools/${name}/invoke`].post.requestBody.content['application/json'].schema;
      expect(body.properties.session_id, name).toMatchObject({ type: 'string', pattern });
    }
  });
});
