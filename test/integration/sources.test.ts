/**
 * GET /sources: where each tool comes from, and each upstream's health as its calls saw it — up
 * after an answer (a refusal included), down with its last error when it cannot be reached —
 * shown to each key for its own tools only.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post } from '../helpers/app.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';
import { PETSTORE_DOCUMENT, startPetstore, type Petstore } from '../helpers/petstore.ts';
import { startNodeServer } from '../helpers/upstreams.ts';

describe('GET /sources', () => {
  let petstore: Petstore;
  let app: FastifyInstance;
  let keys: TestKeys;

  beforeAll(async () => {
    petstore = await startPetstore();
    // A port nothing listens on any more: that upstream cannot be reached.
    const gone = await startNodeServer((_req, res) => res.end());
    await gone.stop();
    const folder = await mkdtemp(join(tmpdir(), 'toolport-sources-'));
    const file = join(folder, 'tools.yaml');
    await writeFile(
      file,
      `openapi:
  - source: petstore
    spec: ${PETSTORE_DOCUMENT}
    base_url: "${petstore.url}/api/v3"
    include: [getInventory, getPetById]
  - source: gone
    spec: ${PETSTORE_DOCUMENT}
    base_url: "${gone.url}/api/v3"
    include: [getInventory]
`,
    );
    keys = await testKeys(['petstore_*']);
    app = await makeApp('memory', { env: { TOOLS_FILE: file, API_KEYS_FILE: keys.file } });
  });
  afterAll(async () => {
    await app?.close();
    await petstore?.stop();
  });

  const sources = async (secret: string) => {
    const answer = await get(app, '/sources', bearer(secret));
    expect(answer.status).toBe(200);
    return Object.fromEntries((answer.body.sources as Record<string, any>[]).map((s) => [s.name, s]));
  };

  it('names every source with its tools; an upstream no call has reached yet is unknown', async () => {
    const all = await sources(keys.admin);
    expect(all.petstore).toMatchObject({
      kind: 'openapi',
      tools: ['petstore_getinventory', 'petstore_getpetbyid'],
      state: 'unknown',
      calls: 0,
      last_error: null,
    });
    expect(all.gone).toMatchObject({ kind: 'openapi', tools: ['gone_getinventory'], state: 'unknown' });
    expect(all['built-in']).toMatchObject({ kind: 'builtin', state: 'up' });
    expect(all['built-in'].tools).toContain('planning_setup_plan');
  });

  it('counts answers, refusals included, as up and an unreachable upstream as down with its last error', async () => {
    expect((await post(app, { name: 'petstore_getinventory', arguments: {} }, bearer(keys.admin))).body.success).toBe(true);
    const refused = await post(app, { name: 'petstore_getpetbyid', arguments: { petId: 404404 } }, bearer(keys.admin));
    expect(refused.body.error.code).toBe('upstream_rejected');
    const failed = await post(app, { name: 'gone_getinventory', arguments: {} }, bearer(keys.admin));
    expect(failed.body.error.code).toBe('upstream_unavailable');

    const all = await sources(keys.admin);
    expect(all.petstore).toMatchObject({ state: 'up', calls: 2, failures: 0, last_error: null });
    expect(all.gone).toMatchObject({ state: 'down', calls: 1, failures: 1, reason: null });
    expect(all.gone.last_error).toMatchObject({ code: 'upstream_unavailable', detail: expect.stringContaining('endpoint unreachable') });
    expect(Date.parse(all.gone.last_error.at)).toBeGreaterThan(Date.now() - 60_000);

    // Failures in a row: still down, each counted.
    await post(app, { name: 'gone_getinventory', arguments: {} }, bearer(keys.admin));
    expect((await sources(keys.admin)).gone).toMatchObject({ state: 'down', failures: 2 });
  });

  it("shows a key only its own tools' sources, and asks for a key", async () => {
    const mine = await sources(keys.agent);
    expect(Object.keys(mine)).toEqual(['petstore']);
    expect(mine.petstore.tools).toEqual(['petstore_getinventory', 'petstore_getpetbyid']);
    expect((await get(app, '/sources')).status).toBe(401);
  });

  it('leaves /readyz as it was: an upstream known only by its calls never makes the replica unready', async () => {
    const ready = await get(app, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.upstreams_down).toBeUndefined();
  });
});
