/**
 * A replica killed (kill -9) in the middle of a call: its staged session writes never appear, not
 * even in part, and the session keeps working from the other replica. (The ledger's lease lapsing
 * after a kill is tested in ledger-replicas.test.ts.)
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../../support/children.ts';
import { makeApp, post, sessionEvents } from '../helpers/app.ts';
import { startReplica } from '../helpers/replicas.ts';

describe('a replica killed mid-call', () => {
  const prefix = `crash-${randomUUID().slice(0, 8)}:`;
  let survivor: FastifyInstance;
  beforeAll(async () => {
    survivor = await makeApp('redis', { env: { KEY_PREFIX: prefix } });
  });
  afterAll(async () => {
    await Promise.all([survivor.close(), stopAll()]);
  });

  it('leaves none of its staged session writes behind', async () => {
    const session = `crash-${randomUUID()}`;
    await post(survivor, { name: 'writes_many', arguments: { n: 5, value: 'before' } }, { 'x-session-id': session });

    const marks = path.join(mkdtempSync(path.join(tmpdir(), 'crash-')), 'started');
    const { child, port } = await startReplica(
      'toolport replica (to be killed)',
      { KEY_PREFIX: prefix, TOOL_PLUGINS: 'test/fixtures/session-writer-plugin.ts', CRASH_TEST_MARKS: marks },
      20_000,
    );
    const call = fetch(`http://127.0.0.1:${port}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-id': session },
      body: JSON.stringify({ name: 'write_slowly', arguments: { value: 'half-done' }, id: 'doomed' }),
    }).catch((err: unknown) => err);
    for (let i = 0; i < 200 && !(existsSync(marks) && readFileSync(marks, 'utf8').includes('doomed')); i++) await sleep(20);
    expect(readFileSync(marks, 'utf8')).toContain('doomed');

    child.proc.kill('SIGKILL');
    expect(await call).toBeInstanceOf(Error);
    const values = (await survivor.toolport.store.sessionRead(session, ['k0', 'k1', 'k2', 'k3', 'k4'])).values;
    expect(values).toEqual(Array(5).fill('"before"'));
    expect((await sessionEvents(survivor, session)).map((e) => e.call_id)).not.toContain('doomed');
    // The session goes on from the surviving replica.
    expect((await post(survivor, { name: 'writes_many', arguments: { n: 5, value: 'after' } }, { 'x-session-id': session })).body.success).toBe(true);
    expect((await survivor.toolport.store.sessionRead(session, ['k0', 'k4'])).values).toEqual(['"after"', '"after"']);
  });
});
