/** Every tool-level failure row of docs/formats.md, through the real HTTP app, on both stores. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeApp, post, STORES } from '../helpers/app.ts';
import { runs } from '../helpers/tools.ts';

describe.each(STORES)('tool-level failures (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store);
  });
  afterAll(() => app.close());
  beforeEach(() => runs.clear());

  it('answers a successful call with the result, its content and tool hash', async () => {
    const { status, body } = await post(app, { name: 'echo', arguments: { text: 'hi' }, id: 'call_1' });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: 'call_1',
      name: 'echo',
      success: true,
      message: 'echoed',
      value: { text: 'hi' },
      error: null,
      content: 'echoed\n\n{"text":"hi"}',
      replayed: false,
      effect_id: null,
      idempotency_key: null,
      exclude_value_from_context: false,
    });
    expect(body.tool_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(body.tool_message).toEqual({ message: 'echoed', value: { text: 'hi' }, success: true, exclude_value_from_context: false });
    expect(typeof body.duration_ms).toBe('number');
  });

  it('makes up a call id when the caller sends none', async () => {
    const { body } = await post(app, { name: 'echo', arguments: { text: 'hi' } });
    expect(body.id).toMatch(/^call_[0-9a-f-]{36}$/);
  });

  it('answers unknown_tool with the names the model may call', async () => {
    const { status, body } = await post(app, { name: 'nope', arguments: {} });
    expect(status).toBe(200);
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('unknown_tool');
    expect(body.message).toContain('Unknown tool "nope"');
    expect(body.message).toContain('echo');
    expect(body.content).toBe(body.message);
    expect(body.tool_hash).toBeNull();
  });

  it('answers invalid_arguments for arguments that are not JSON', async () => {
    const { body } = await post(app, { name: 'echo', arguments: '{"text": "unterminated' });
    expect(body.error.code).toBe('invalid_arguments');
    expect(body.message).toContain('not valid JSON');
    expect(runs.get('echo')).toBeUndefined();
  });

  it('lists every violation as path: problem, with the expected shape', async () => {
    const { body } = await post(app, { name: 'echo', arguments: { n: 'seven', extra: true } });
    expect(body.error.code).toBe('invalid_arguments');
    expect(body.message).toContain('/text: is required');
    expect(body.message).toContain('/n: must be integer');
    expect(body.message).toContain('/extra: is not an allowed property');
    expect(body.message).toContain('Expected arguments (JSON Schema)');
    expect(body.error.detail.split('; ').sort()).toEqual(['/extra: is not an allowed property', '/n: must be integer', '/text: is required']);
  });

  it('refuses rather than coerces or strips: "1" is not an integer and extra keys are not dropped', async () => {
    const { body } = await post(app, { name: 'echo', arguments: '{"text":"a","n":"1"}' });
    expect(body.error.code).toBe('invalid_arguments');
    expect(runs.get('echo')).toBeUndefined();
  });

  it('takes arguments as a JSON string, and an empty string as no arguments', async () => {
    expect((await post(app, { name: 'echo', arguments: '{"text":"from string"}' })).body.value).toEqual({ text: 'from string' });
    expect((await post(app, { name: 'secret', arguments: '' })).body.success).toBe(true);
    expect((await post(app, { name: 'secret' })).body.success).toBe(true);
  });

  it('answers handler_error without the stack or the thrown message details beyond the reason', async () => {
    const { status, body } = await post(app, { name: 'throws', arguments: {} });
    expect(status).toBe(200);
    expect(body.error.code).toBe('handler_error');
    expect(body.message).toContain('Tool "throws" failed');
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/);
  });

  it('answers handler_error for a thrown non-Error whose toString throws', async () => {
    const { body } = await post(app, { name: 'throws_value', arguments: {} });
    expect(body.error.code).toBe('handler_error');
  });

  it('answers deadline_exceeded at the X-Timeout-Ms deadline even when the handler never resolves', async () => {
    const started = Date.now();
    const { body } = await post(app, { name: 'hang', arguments: {} }, { 'x-timeout-ms': '100' });
    expect(body.error.code).toBe('deadline_exceeded');
    expect(body.message).toContain('100 ms');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("enforces the tool's own timeout_ms when it is the earliest", async () => {
    const started = Date.now();
    const { body } = await post(app, { name: 'capped', arguments: {} }, { 'x-timeout-ms': '10000' });
    expect(body.error.code).toBe('deadline_exceeded');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('drops the answer of a handler that blocked past its deadline', async () => {
    const { body } = await post(app, { name: 'blocks', arguments: { ms: 120 } }, { 'x-timeout-ms': '50' });
    expect(body.error.code).toBe('deadline_exceeded');
  });

  it('does not start the handler when the deadline has already passed', async () => {
    const { body } = await post(app, { name: 'echo', arguments: { text: 'x' } }, { 'x-timeout-ms': '0' });
    expect(body.error.code).toBe('deadline_exceeded');
    expect(runs.get('echo')).toBeUndefined();
  });

  it('answers result_invalid when the handler returns something that is not a ToolResult', async () => {
    const { body } = await post(app, { name: 'not_a_result', arguments: {} });
    expect(body.error.code).toBe('result_invalid');
    expect(body.value).toBeNull();
  });

  it('answers result_invalid when the value breaks the result schema, without returning that value', async () => {
    const { body } = await post(app, { name: 'breaks_result', arguments: {} });
    expect(body.error.code).toBe('result_invalid');
    expect(body.error.detail).toContain('/n: must be integer');
    expect(body.value).toBeNull();
  });

  it('answers result_invalid when the value has no JSON form', async () => {
    const { body } = await post(app, { name: 'unserializable', arguments: {} });
    expect(body.error.code).toBe('result_invalid');
  });

  it('reports a failure the handler returned itself as tool_failed with its own guidance', async () => {
    const { body } = await post(app, { name: 'fails', arguments: {} });
    expect(body).toMatchObject({ success: false, message: 'Nothing found: try another query.', error: { code: 'tool_failed' } });
    expect(body.content).toBe('Nothing found: try another query.');
  });

  it('keeps the value out of content when exclude_value_from_context is set, but returns it', async () => {
    const { body } = await post(app, { name: 'secret', arguments: {} });
    expect(body.content).toBe('stored');
    expect(body.value).toEqual({ token: 'hidden-from-model' });
    expect(body.exclude_value_from_context).toBe(true);
  });

  it('hands the handler frozen params and a frozen context', async () => {
    const { body } = await post(app, { name: 'mutates', arguments: { list: [1, 2, 3] } });
    expect(body.value).toEqual({ attempts: ['refused', 'refused', 'refused'], list: [1, 2, 3] });
  });

  it('lets a handler call another tool through context.invoke', async () => {
    const { body } = await post(app, { name: 'delegates', arguments: { text: 'x' } });
    expect(body.value.nested).toMatchObject({ success: true, value: { text: 'inner x' } });
  });

  it('takes the bare arguments object on POST /tools/{name}/invoke', async () => {
    const ok = await post(app, { text: 'bare' }, {}, '/tools/echo/invoke');
    expect(ok.body).toMatchObject({ name: 'echo', success: true, value: { text: 'bare' } });
    const wrong = await post(app, '"a string"', {}, '/tools/echo/invoke');
    expect(wrong.body.error.code).toBe('invalid_arguments');
    const unknown = await post(app, {}, {}, '/tools/missing/invoke');
    expect(unknown.status).toBe(200);
    expect(unknown.body.error.code).toBe('unknown_tool');
  });
});
