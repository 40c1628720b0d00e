/** The two ledgers directly: the state transitions, the fencing token, and that every step is safe to repeat. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { MemoryLedger } from '../../src/store/memory/ledger.ts';
import { RedisLedger } from '../../src/store/redis/ledger.ts';
import type { BeginRequest, EffectLedger, EntryLabels, ToolEffect } from '../../src/store/ledger.ts';

const clients: Redis[] = [];
afterAll(() => clients.forEach((client) => client.disconnect()));

function redisLedger(indexesApart: boolean): EffectLedger {
  const client = new Redis(inject('redisUrl'));
  clients.push(client);
  return new RedisLedger(client, `unit-${randomUUID().slice(0, 8)}:`, (command) => command(), { indexesApart });
}

const ledgers: [string, () => EffectLedger][] = [
  ['memory', () => new MemoryLedger()],
  ['redis', () => redisLedger(false)],
  ['redis (indexes written apart, as on Cluster)', () => redisLedger(true)],
];

const labels: EntryLabels = { tool: 'pay', scope: 'global', paramsHash: 'a'.repeat(64) };

function request(key: string, token: string, extra: Partial<BeginRequest> = {}): BeginRequest {
  return { ...labels, key, token, leaseMs: 5000, strictPayload: false, ...extra };
}

function effectFor(key: string): ToolEffect {
  return {
    effect_id: randomUUID(),
    idempotency_key: key,
    tool_name: 'pay',
    params_hash: labels.paramsHash,
    result_message: 'paid',
    result_value: { list: [], big: 2 ** 53 - 1, nested: { empty: {} } },
    result_success: true,
    created_at: new Date().toISOString(),
    expires_at: null,
    exclude_value_from_context: false,
    tool_hash: 'h',
  };
}

describe.each(ledgers)('%s ledger', (_name, make) => {
  const ledger = make();
  const key = () => `global:pay:${randomUUID()}`;

  it('gives the lease to the first begin, and reports it to the others', async () => {
    const k = key();
    expect(await ledger.begin(request(k, 't1'))).toEqual({ kind: 'run', token: 't1' });
    const other = await ledger.begin(request(k, 't2'));
    expect(other.kind).toBe('in_progress');
    expect(other.kind === 'in_progress' && other.leaseLeftMs).toBeGreaterThan(4000);
  });

  it('answers "run" again to a repeated begin with the same token (a re-sent command)', async () => {
    const k = key();
    await ledger.begin(request(k, 't1'));
    expect(await ledger.begin(request(k, 't1'))).toEqual({ kind: 'run', token: 't1' });
  });

  it('records a success exactly as given (empty arrays and large integers survive), and replays it', async () => {
    const k = key();
    await ledger.begin(request(k, 't1'));
    const effect = effectFor(k);
    expect(await ledger.complete(labels, 't1', effect, null)).toBe(true);
    expect(await ledger.complete(labels, 't1', effect, null)).toBe(true); // repeated: same record
    expect(await ledger.begin(request(k, 't2'))).toEqual({ kind: 'replay', effect });
    expect(await ledger.lookup(k)).toEqual(effect);
  });

  it('refuses to record for a token whose lease lapsed and was taken over (fencing)', async () => {
    const k = key();
    await ledger.begin(request(k, 'old', { leaseMs: 30 }));
    await sleep(60);
    expect((await ledger.begin(request(k, 'new'))).kind).toBe('run');
    expect(await ledger.complete(labels, 'old', effectFor(k), 60)).toBe(false);
    expect(await ledger.renew(k, 'old', 5000)).toBe(false);
    await ledger.abort(k, 'old');
    expect((await ledger.begin(request(k, 'third'))).kind).toBe('in_progress');
  });

  it('still records a success whose lease lapsed when no other call took the key over', async () => {
    const k = key();
    await ledger.begin(request(k, 'slow', { leaseMs: 30 }));
    await sleep(60);
    expect(await ledger.complete(labels, 'slow', effectFor(k), 60)).toBe(true);
    const outcome = await ledger.begin(request(k, 'retry'));
    expect(outcome.kind).toBe('replay');
    expect(await ledger.complete(labels, 'late-other', effectFor(k), 60)).toBe(false);
  });

  it('frees the key on abort, only for the token holding it, and never drops a record', async () => {
    const k = key();
    await ledger.begin(request(k, 't1'));
    await ledger.abort(k, 't1');
    await ledger.abort(k, 't1'); // repeated: nothing left to drop
    expect((await ledger.begin(request(k, 't2'))).kind).toBe('run');
    await ledger.complete(labels, 't2', effectFor(k), 60);
    await ledger.abort(k, 't2');
    expect((await ledger.begin(request(k, 't3'))).kind).toBe('replay');
  });

  it('keeps a renewed lease alive past its first term', async () => {
    // Terms long next to any pause of a busy machine: the second check falls after the first term ends.
    const k = key();
    const begun = Date.now();
    await ledger.begin(request(k, 't1', { leaseMs: 1500 }));
    await sleep(500);
    expect(await ledger.renew(k, 't1', 4000)).toBe(true);
    await sleep(Math.max(0, begun + 1700 - Date.now()));
    expect((await ledger.begin(request(k, 't2'))).kind).toBe('in_progress');
  });

  it('reports a payload mismatch only when the payload must match', async () => {
    const k = key();
    await ledger.begin(request(k, 't1'));
    const other = { paramsHash: 'b'.repeat(64) };
    expect((await ledger.begin(request(k, 't2', other))).kind).toBe('in_progress');
    expect(await ledger.begin(request(k, 't2', { ...other, strictPayload: true }))).toEqual({ kind: 'mismatch' });
  });

  it('invalidates by tool and by scope, counting only live records', async () => {
    const ledger = make(); // its own entries only
    const keys = [key(), key()];
    for (const k of keys) {
      await ledger.begin(request(k, 't'));
      await ledger.complete(labels, 't', effectFor(k), 60);
    }
    const other: EntryLabels = { ...labels, tool: 'refund', scope: 'session:x' };
    const k3 = key();
    await ledger.begin({ ...request(k3, 't'), ...other });
    await ledger.complete(other, 't', effectFor(k3), 60);
    expect(await ledger.invalidateTool('pay')).toBe(2);
    expect(await ledger.lookup(keys[0]!)).toBeNull();
    expect(await ledger.clearScope('session:x')).toBe(1);
    expect(await ledger.lookup(k3)).toBeNull();
    expect(await ledger.invalidate(k3)).toBe(false);
  });
});

describe('memory ledger expiry', () => {
  it('forgets lapsed leases on access and on prune()', async () => {
    const ledger = new MemoryLedger();
    await ledger.begin(request('a', 't', { leaseMs: 10 }));
    await ledger.begin(request('b', 't', { leaseMs: 10 }));
    await sleep(20);
    expect((await ledger.begin(request('a', 'u'))).kind).toBe('run');
    expect(ledger.prune()).toBe(1);
  });
});
