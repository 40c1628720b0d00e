/**
 * An idempotent HTTP tool across two replicas on one Redis (docs/ledger.md, docs/tool-sources.md): the upstream effect
 * runs once, and the upstream receives the ledger key as Idempotency-Key.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post } from '../helpers/app.ts';
import { startPythonToolServer, type PythonToolServer } from '../helpers/upstreams.ts';

let python: PythonToolServer;
let folder: string;
let one: FastifyInstance;
let two: FastifyInstance;

beforeAll(async () => {
  python = await startPythonToolServer();
  folder = await mkdtemp(join(tmpdir(), 'toolport-http-ledger-'));
  const toolsFile = join(folder, 'tools.json');
  await writeFile(
    toolsFile,
    JSON.stringify({
      http: [
        {
          name: 'charge_card',
          description: 'Charges a card once per distinct call.',
          parameters: { type: 'object', properties: { amount: { type: 'integer' }, order: { type: 'string' } }, required: ['amount', 'order'] },
          idempotency: { strategy: 'params', param_keys: ['order'], scope: 'global' },
          annotations: { idempotent: true, destructive: false },
          endpoint: { url: `${python.url}/charge` },
        },
      ],
    }),
  );
  const env = { KEY_PREFIX: `http-ledger-${randomUUID().slice(0, 8)}:`, TOOLS_FILE: toolsFile };
  [one, two] = await Promise.all([makeApp('redis', { env }), makeApp('redis', { env })]);
});

afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
  await Promise.all([python?.stop(), rm(folder, { recursive: true, force: true })]);
});

/** The charges the Python server made under this Idempotency-Key. */
async function chargesUnder(key: string): Promise<{ amount: number; idempotency_key: string }[]> {
  const answer = (await (await fetch(`${python.url}/charges`)).json()) as { charges: { amount: number; idempotency_key: string }[] };
  return answer.charges.filter((c) => c.idempotency_key === key);
}

describe('idempotent HTTP tool on two replicas (redis)', () => {
  it('runs the upstream effect once for concurrent identical calls on both replicas, forwarding the ledger key', async () => {
    const order = `order-${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(i % 2 === 0 ? one : two, { name: 'charge_card', arguments: { amount: 42, order } })),
    );
    expect(results.every((r) => r.status === 200 && r.body.success === true)).toBe(true);
    const keys = new Set(results.map((r) => r.body.idempotency_key as string));
    expect(keys.size).toBe(1);
    const [key] = [...keys];
    expect(key).toMatch(/^global:charge_card:[0-9a-f]{64}$/);
    expect(await chargesUnder(key!)).toEqual([{ amount: 42, idempotency_key: key }]);
    expect(results.filter((r) => r.body.replayed === true)).toHaveLength(9);
    expect(new Set(results.map((r) => r.body.value.charge)).size).toBe(1);
  });
});
