/**
 * Large results (docs/large-results.md): a 1 MB result's content is cut and the whole is kept as a result
 * resource, readable by the caller that made the call over HTTP (GET /results/{id}), MCP (the
 * official SDK client's readResource) and the result_read tool, page by page; another key finds
 * nothing, and nobody does after RESULT_TTL_S.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { pluginSource } from '../../src/tools/source.ts';
import type { SourceRegistry as Registry } from '../../src/tools/registry.ts';
import { makeApp, STORES } from '../helpers/app.ts';
import { connectMcp } from '../helpers/mcp-client.ts';
import { until } from '../helpers/tasks.ts';
import { ToolDefinitionError } from '../../src/errors.ts';

const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
const SECRETS = { owner: `sk-owner-${randomUUID()}`, other: `sk-other-${randomUUID()}`, ops: `sk-ops-${randomUUID()}` };
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** 1 MB of numbered lines, so a page read at the wrong offset cannot pass for the right one. */
const HUGE = Array.from({ length: 200_000 }, (_, i) => `${String(i).padStart(6, '0')}\n`)
  .join('')
  .slice(0, 1_000_000);

function registerLargeTools(registry: Registry): void {
  registry.registerTool({
    name: 'huge_report',
    description: 'Answers a 1 MB text.',
    parameters: { type: 'object', properties: {} },
    handler: () => ok(null, HUGE),
  });
  registry.registerTool({
    name: 'terse_report',
    description: 'Answers 2,000 characters, but its own content limit is 500.',
    parameters: { type: 'object', properties: {} },
    max_content_chars: 500,
    handler: () => ok({ text: 'y'.repeat(1980) }, 'terse'),
  });
}

async function keysFile(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolport-results-keys-'));
  const file = path.join(dir, 'keys.json');
  const keys = [
    { id: 'owner', key_sha256: sha(SECRETS.owner), tools: ['*'] },
    { id: 'other', key_sha256: sha(SECRETS.other), tools: ['*'] },
    { id: 'ops', key_sha256: sha(SECRETS.ops), tools: ['*'], admin: true },
  ];
  await writeFile(file, JSON.stringify(keys));
  return file;
}

describe.each(STORES)('large results (%s store)', (store) => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await makeApp(store, { env: { API_KEYS_FILE: await keysFile() }, register: registerLargeTools });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  async function invoke(body: unknown, secret: string): Promise<Record<string, any>> {
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(secret) },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, any>;
  }

  it('cuts a 1 MB content, names the kept whole in the notice, and serves it at GET /results/{id} to its caller only', async () => {
    const result = await invoke({ name: 'huge_report', arguments: {} }, SECRETS.owner);
    const ref = result.result_ref;
    expect(ref).toEqual({
      uri: expect.stringMatching(/^toolport:\/\/results\/[0-9a-f-]{36}$/),
      url: expect.stringMatching(/^\/results\/[0-9a-f-]{36}$/),
      chars: 1_000_000,
    });
    expect(ref.uri.split('/').at(-1)).toBe(ref.url.split('/').at(-1));
    expect(result.content.length).toBeLessThanOrEqual(100_000);
    expect(HUGE.startsWith(result.content.slice(0, 90_000))).toBe(true);
    expect(result.content).toContain(ref.uri);
    expect(result.content).toMatch(/result_read/);
    expect(result.message).toBe(HUGE); // the message and value stay whole
    const read = await fetch(`${base}${ref.url}`, { headers: bearer(SECRETS.owner) });
    expect(read.status).toBe(200);
    const kept = (await read.json()) as Record<string, any>;
    expect(kept).toMatchObject({ uri: ref.uri, url: ref.url, tool: 'huge_report', call_id: result.id, chars: 1_000_000 });
    expect(kept.content).toBe(HUGE);
    // Another key finds nothing, an admin key reads it (every record has an owner, admins see all); no key is a 401.
    const foreign = await fetch(`${base}${ref.url}`, { headers: bearer(SECRETS.other) });
    expect(foreign.status).toBe(404);
    expect((await fetch(`${base}${ref.url}`, { headers: bearer(SECRETS.ops) })).status).toBe(200);
    expect(foreign.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((await fetch(`${base}${ref.url}`)).status).toBe(401);
    expect((await fetch(`${base}/results/${randomUUID()}`, { headers: bearer(SECRETS.owner) })).status).toBe(404);
    expect((await fetch(`${base}/results/not-an-id`, { headers: bearer(SECRETS.owner) })).status).toBe(400);
  });

  it('pages through the whole with result_read, for its caller only', async () => {
    const { result_ref: ref } = await invoke({ name: 'huge_report', arguments: {} }, SECRETS.owner);
    let whole = '';
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const page = await invoke({ name: 'result_read', arguments: { uri: ref.uri, offset, length: 1_000_000 } }, SECRETS.owner);
      expect(page.success).toBe(true);
      expect(page.result_ref).toBeUndefined(); // a page always fits
      expect(page.content.length).toBeLessThanOrEqual(100_000);
      expect(page.content).toContain(page.value.text);
      expect(page.value).toMatchObject({ uri: ref.uri, offset, chars: 1_000_000 });
      whole += page.value.text;
      offset = page.value.next_offset;
      pages++;
    }
    expect(whole).toBe(HUGE);
    expect(pages).toBe(Math.ceil(1_000_000 / (100_000 - 200)));
    const small = await invoke({ name: 'result_read', arguments: { uri: ref.uri, offset: 7, length: 14 } }, SECRETS.owner);
    expect(small.value).toMatchObject({ text: HUGE.slice(7, 21), next_offset: 21 });
    expect(small.content).toMatch(/^Characters 7–21 of 1000000 of toolport:\/\/results\/.*continue with offset 21/);
    const foreign = await invoke({ name: 'result_read', arguments: { uri: ref.uri } }, SECRETS.other);
    expect(foreign).toMatchObject({ success: false, error: { code: 'tool_failed' } });
    expect((await invoke({ name: 'result_read', arguments: { uri: ref.uri, offset: 1_000_000 } }, SECRETS.owner)).message).toMatch(/past the end/);
    expect((await invoke({ name: 'result_read', arguments: { uri: 'toolport://results/x' } }, SECRETS.owner)).error.code).toBe('invalid_arguments');
  });

  it("over MCP, carries a resource_link that the official client's readResource reads, for its caller only", async () => {
    const url = new URL('/mcp', base);
    const owner = await connectMcp('v1', url, { headers: bearer(SECRETS.owner) });
    const other = await connectMcp('v1', url, { headers: bearer(SECRETS.other) });
    try {
      const result = await owner.callTool('huge_report', {});
      expect(result.isError).toBe(false);
      expect(result.content[0]).toMatchObject({ type: 'text' });
      expect(result.content[0].text.length).toBeLessThanOrEqual(100_000);
      const link = result.content.find((block: { type: string }) => block.type === 'resource_link');
      expect(link).toMatchObject({ uri: expect.stringMatching(/^toolport:\/\/results\//), name: expect.any(String), mimeType: 'text/plain' });
      expect(result.content[0].text).toContain(link.uri);
      const read = await owner.readResource(link.uri);
      expect(read.contents).toEqual([{ uri: link.uri, mimeType: 'text/plain', text: HUGE }]);
      await expect(other.readResource(link.uri)).rejects.toMatchObject({ code: -32002 });
    } finally {
      await Promise.all([owner.close(), other.close()]);
    }
  });

  it("cuts at the tool's own max_content_chars", async () => {
    const result = await invoke({ name: 'terse_report', arguments: {} }, SECRETS.owner);
    expect(result.content.length).toBeLessThanOrEqual(500);
    expect(result.result_ref.chars).toBe(`terse\n\n${JSON.stringify({ text: 'y'.repeat(1980) })}`.length);
    const kept = (await (await fetch(`${base}${result.result_ref.url}`, { headers: bearer(SECRETS.owner) })).json()) as Record<string, any>;
    expect(kept.content).toBe(`terse\n\n${JSON.stringify({ text: 'y'.repeat(1980) })}`);
    expect((await invoke({ name: 'echo', arguments: { text: 'short' } }, SECRETS.owner)).result_ref).toBeUndefined();
  });
});

describe.each(STORES)('large results after RESULT_TTL_S (%s store)', (store) => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await makeApp(store, { env: { RESULT_TTL_S: '1' }, register: registerLargeTools });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  it('are gone over HTTP, MCP and result_read', async () => {
    const post = async (body: unknown) =>
      (await (
        await fetch(`${base}/tools/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      ).json()) as Record<string, any>;
    const { result_ref: ref } = await post({ name: 'terse_report', arguments: {} });
    expect((await fetch(`${base}${ref.url}`)).status).toBe(200);
    await until('the result expires', async () => (await fetch(`${base}${ref.url}`)).status === 404);
    expect(await post({ name: 'result_read', arguments: { uri: ref.uri } })).toMatchObject({ success: false, message: expect.stringMatching(/^No result at/) });
    const client = await connectMcp('v2 pinned 2026-07-28', new URL('/mcp', base));
    try {
      // The v2 client turns MCP's resource-not-found answer into its ResourceNotFoundError.
      await expect(client.readResource(ref.uri)).rejects.toThrow(/Resource not found/);
    } finally {
      await client.close();
    }
  });
});

describe('max_content_chars', () => {
  it('must be a whole number below MAX_CONTENT_CHARS', () => {
    const tool = (max: unknown) => ({ name: 't', description: 'd', parameters: { type: 'object' }, max_content_chars: max, handler: () => ok(null, '') });
    for (const bad of [1000, 5000, 0, 1.5, '10']) {
      expect(() => new ToolRegistry({ maxContentChars: 1000 }).of(pluginSource('large.ts')).registerTool(tool(bad) as never)).toThrow(ToolDefinitionError);
    }
    expect(() => new ToolRegistry({ maxContentChars: 1000 }).of(pluginSource('large.ts')).registerTool(tool(999) as never)).not.toThrow();
  });
});
