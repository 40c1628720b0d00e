/** Request-level answers (problem+json) and whole turns, through the real HTTP app, on both stores. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post, STORES } from '../helpers/app.ts';

function expectProblem(response: { status: number; headers: Record<string, unknown>; body: Record<string, any> }, status: number) {
  expect(response.status).toBe(status);
  expect(String(response.headers['content-type'])).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  expect(JSON.stringify(response.body)).not.toMatch(/\n\s+at /);
}

describe.each(STORES)('request-level errors (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store, { env: { MAX_BODY_BYTES: '2048' } });
  });
  afterAll(() => app.close());

  it('answers 400 for a body that is not JSON', async () => {
    expectProblem(await post(app, '{"name": "echo",'), 400);
  });

  it('answers 400 listing the accepted shapes when no call is recognisable', async () => {
    const response = await post(app, { hello: 'world' });
    expectProblem(response, 400);
    expect(response.body.detail).toContain('native');
    expectProblem(await post(app, [1, 2]), 400);
    expectProblem(await post(app, '"just a string"'), 400);
    expectProblem(await post(app, { calls: [] }), 400);
    expectProblem(await post(app, { calls: [{ name: 'echo' }, 7] }), 400);
  });

  it('answers 400 for an empty body', async () => {
    expectProblem(await post(app, ''), 400);
  });

  it('answers 400, not a stack overflow, for JSON nested 10,000 deep', async () => {
    const deep = `{"name":"echo","arguments":{"text":"a","n":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`;
    const big = await makeApp(store, { env: { MAX_BODY_BYTES: '1048576' } });
    try {
      expectProblem(await post(big, deep), 400);
    } finally {
      await big.close();
    }
  });

  it('answers invalid_arguments, not a 500, for arguments nested 10,000 deep inside a JSON string', async () => {
    const big = await makeApp(store);
    try {
      const args = `{"text":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
      const { status, body } = await post(big, { name: 'echo', arguments: args });
      expect(status).toBe(200);
      expect(body.error.code).toBe('invalid_arguments');
    } finally {
      await big.close();
    }
  });

  it('answers 400 for __proto__ keys and leaves Object.prototype alone', async () => {
    expectProblem(await post(app, '{"name":"echo","arguments":{"text":"a","__proto__":{"polluted":true}}}'), 400);
    const viaString = await post(app, { name: 'echo', arguments: '{"text":"a","__proto__":{"polluted":true}}' });
    expect(viaString.body.error.code).toBe('invalid_arguments');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('takes the last of duplicate keys, the same value for validation and handler (nothing smuggled)', async () => {
    const refused = await post(app, '{"name":"echo","arguments":{"text":"fine","text":5}}');
    expect(refused.body.error.code).toBe('invalid_arguments');
    const taken = await post(app, '{"name":"nope","name":"echo","arguments":{"text":5,"text":"last"}}');
    expect(taken.body).toMatchObject({ name: 'echo', success: true, value: { text: 'last' } });
  });

  it('answers 400 for an integer beyond 2^53 instead of silently changing it', async () => {
    const response = await post(app, '{"name":"echo","arguments":{"text":"a","n":9007199254740993}}');
    expectProblem(response, 400);
    expect(response.body.detail).toContain('2^53');
  });

  it('answers 400 for a body that is not valid UTF-8 rather than replacing the bytes', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"echo","arguments":{"text":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}')]);
    const response = await app.inject({ method: 'POST', url: '/tools/invoke', headers: { 'content-type': 'application/json' }, payload: bytes });
    expectProblem({ status: response.statusCode, headers: response.headers, body: response.json() }, 400);
    expect(response.json().detail).toContain('UTF-8');
    const fine = await post(app, { name: 'echo', arguments: { text: 'héllo ✓ 😀' } });
    expect(fine.body.value).toEqual({ text: 'héllo ✓ 😀' });
  });

  it('answers 413 for a body over MAX_BODY_BYTES', async () => {
    expectProblem(await post(app, { name: 'echo', arguments: { text: 'x'.repeat(4096) } }), 413);
  });

  it('answers 415 for a body that is not JSON by content type', async () => {
    const plain = await app.inject({ method: 'POST', url: '/tools/invoke', headers: { 'content-type': 'text/plain' }, payload: 'hi' });
    expectProblem({ status: plain.statusCode, headers: plain.headers, body: plain.json() }, 415);
    const form = await app.inject({ method: 'POST', url: '/tools/invoke', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1' });
    expect(form.statusCode).toBe(415);
  });

  it('answers 400 for a malformed X-Session-Id or X-Timeout-Ms', async () => {
    expectProblem(await post(app, { name: 'echo', arguments: { text: 'a' } }, { 'x-session-id': 'has space' }), 400);
    expectProblem(await post(app, { name: 'echo', arguments: { text: 'a' } }, { 'x-session-id': 'x'.repeat(129) }), 400);
    expectProblem(await post(app, { name: 'echo', arguments: { text: 'a' } }, { 'x-timeout-ms': '-5' }), 400);
    expectProblem(await post(app, { name: 'echo', arguments: { text: 'a' } }, { 'x-timeout-ms': 'soon' }), 400);
  });

  it('answers 400 for an unknown ?format=', async () => {
    const response = await post(app, { name: 'echo', arguments: { text: 'a' } }, {}, '/tools/invoke?format=cobol');
    expectProblem(response, 400);
    expect(response.body.detail).toContain('native');
  });

  it('answers 404 as a problem for an unknown route', async () => {
    const response = await app.inject({ method: 'GET', url: '/nowhere' });
    expectProblem({ status: response.statusCode, headers: response.headers, body: response.json() }, 404);
  });

  it('echoes a well-formed X-Request-Id and names it in problems', async () => {
    const response = await post(app, '{', { 'x-request-id': 'req-42' });
    expect(response.headers['x-request-id']).toBe('req-42');
    expect(response.body.request_id).toBe('req-42');
  });
});

describe.each(STORES)('whole turns (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store);
  });
  afterAll(() => app.close());

  it('runs the calls of a turn in parallel and answers in call order', async () => {
    const calls = [300, 100, 200, 50].map((ms, i) => ({ id: `c${i}`, name: 'slow', arguments: { ms, tag: `t${i}` } }));
    const started = Date.now();
    const { status, body } = await post(app, { calls });
    const elapsed = Date.now() - started;
    expect(status).toBe(200);
    expect(body.results.map((r: { id: string }) => r.id)).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(body.results.map((r: { value: { tag: string } }) => r.value.tag)).toEqual(['t0', 't1', 't2', 't3']);
    expect(body.messages).toHaveLength(4);
    expect(elapsed).toBeLessThan(550);
  });

  it('answers each call of a turn on its own: one failure does not fail the others', async () => {
    const { body } = await post(app, { calls: [{ name: 'echo', arguments: { text: 'a' } }, { name: 'nope' }, { name: 'throws' }] });
    expect(body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, false]);
    expect(body.results[1].error.code).toBe('unknown_tool');
    expect(body.results[2].error.code).toBe('handler_error');
  });

  it('cuts content over MAX_CONTENT_CHARS with a notice and returns the value whole', async () => {
    const small = await makeApp(store, { env: { MAX_CONTENT_CHARS: '300' } });
    try {
      const { body } = await post(small, { name: 'big', arguments: { size: 5000 } });
      expect(body.content.length).toBeLessThanOrEqual(300);
      expect(body.content).toContain('truncated');
      expect(body.value.text).toHaveLength(5000);
    } finally {
      await small.close();
    }
  });
});
