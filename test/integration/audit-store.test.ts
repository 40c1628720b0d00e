/**
 * The audit log's store on both backends (docs/audit.md): one chain numbered and linked by the store,
 * retention from the oldest end, and a chain that still verifies once its oldest entries are gone.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AuditTrail } from '../../src/audit/trail.ts';
import { verifyChain } from '../../src/audit/verify.ts';
import { auditHash, type AuditLog, type StoredAuditEntry } from '../../src/store/audit.ts';
import { MemoryAuditLog } from '../../src/store/memory/audit.ts';
import { RedisStore } from '../../src/store/redis/store.ts';
import { RedisServer } from '../../support/redis-server.ts';

const body = (n: number) => ({ text: () => JSON.stringify({ n }) });
const bodies = (from: number, count: number) => Array.from({ length: count }, (_, i) => body(from + i));

async function* everything(log: AuditLog): AsyncGenerator<StoredAuditEntry> {
  yield* await log.oldest(0, 10_000);
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function logOf(kind: 'memory' | 'redis', ttlMs: number): Promise<AuditLog> {
  if (kind === 'memory') return new MemoryAuditLog(ttlMs);
  const store = new RedisStore(
    { url: inject('redisUrl') },
    { keyPrefix: `test:audit-${Date.now()}-${Math.random()}:`, sessionTtlS: 60, sessionMaxEvents: 10, auditTtlMs: ttlMs },
    pino({ level: 'silent' }),
  );
  await store.waitUntilReady();
  closers.push(() => store.close());
  return store.audit;
}

describe.each(['memory', 'redis'] as const)('the audit chain in the %s store', (kind) => {
  it('numbers and links every entry of every batch, in order', async () => {
    const log = await logOf(kind, 60_000);
    await log.append(bodies(1, 3));
    const second = await log.append(bodies(4, 2), true);
    expect(second.map((e) => e.seq)).toEqual([4, 5]);
    const all = await log.oldest(0, 100);
    expect(all.map((e) => e.body)).toEqual([1, 2, 3, 4, 5].map((n) => JSON.stringify({ n })));
    expect(all[0]!.prev).toBe('');
    for (let i = 1; i < all.length; i++) expect(all[i]!.prev).toBe(all[i - 1]!.hash);
    expect(all[4]!.hash).toBe(auditHash(all[3]!.hash, all[4]!.body));
    expect(second[0]!.hash).toBe(all[3]!.hash);
    expect((await log.newest(4, 2)).map((e) => e.seq)).toEqual([3, 2]);
    expect((await verifyChain(everything(log))).broken).toBeNull();
  });

  it('drops entries past the retention from the oldest end; what is left still verifies', async () => {
    const log = await logOf(kind, 200);
    await log.append(bodies(1, 5));
    await sleep(300);
    await log.append(bodies(6, 5));
    const kept = await log.oldest(0, 100);
    expect(kept.map((e) => e.seq)).toEqual([6, 7, 8, 9, 10]);
    expect(kept[0]!.prev).not.toBe('');
    expect(await verifyChain(everything(log))).toMatchObject({ count: 5, firstSeq: 6, lastSeq: 10, broken: null });
  });
});

describe('the memory audit chain', () => {
  it('keeps at most its newest entries, linked across what it dropped', async () => {
    const log = new MemoryAuditLog(60_000, 10);
    for (let i = 0; i < 5; i++) await log.append(bodies(i * 4, 4));
    const kept = await log.oldest(0, 100);
    expect(kept.map((e) => e.seq)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    expect((await verifyChain(everything(log))).broken).toBeNull();
    // Entry 11 links to entry 10, dropped: the hash the chain had there.
    let head = '';
    for (let n = 0; n < 10; n++) head = auditHash(head, JSON.stringify({ n }));
    expect(kept[0]!.prev).toBe(head);
  });
});

describe('what the memory audit chain holds', () => {
  it("makes each entry's text when its batch is appended, and keeps the text, not the body", async () => {
    const log = new MemoryAuditLog(60_000);
    let made = 0;
    const counted = (n: number) => ({
      text: () => {
        made++;
        return JSON.stringify({ n });
      },
    });
    await log.append([counted(1), counted(2)]);
    expect(made).toBe(2);
    const kept = await log.oldest(0, 10);
    expect(kept.map((e) => e.body)).toEqual(['{"n":1}', '{"n":2}']);
    expect(made).toBe(2);
  });

  it('keeps at most its size in text, dropping the oldest first and never the newest', async () => {
    const log = new MemoryAuditLog(60_000, 1000, 100);
    const sized = (n: number, length: number) => ({ text: () => JSON.stringify({ n, pad: 'x'.repeat(length) }) });
    await log.append([sized(1, 30), sized(2, 30)]);
    await log.append([sized(3, 30)]); // three of 47 characters: over 100, the first goes
    expect((await log.oldest(0, 10)).map((e) => e.seq)).toEqual([2, 3]);
    await log.append([sized(4, 500)]); // larger than the whole size: alone, it stays
    const kept = await log.oldest(0, 10);
    expect(kept.map((e) => e.seq)).toEqual([4]);
    expect((await verifyChain(everything(log))).broken).toBeNull();
    // Entry 4 links to entry 3, dropped: the chain went on through what was dropped.
    let head = '';
    for (const n of [1, 2, 3]) head = auditHash(head, sized(n, 30).text());
    expect(kept[0]!.prev).toBe(head);
  });

  it("lets go of a call's arguments once its batch is written, on the memory store and while Redis is down", async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const collected = async (refs: WeakRef<object>[]) => {
      for (let i = 0; i < 5; i++) {
        await sleep(10);
        gc();
      }
      return refs.filter((ref) => ref.deref() !== undefined).length;
    };
    const call = (args: object) => ({ kind: 'call' as const, caller: 'k', tool: 'echo', arguments: args, outcome: 'success' });

    // Made in a function of its own: an async function's saved registers could still hold the last one.
    const record = (trail: AuditTrail) => {
      const refs: WeakRef<object>[] = [];
      for (let i = 0; i < 50; i++) {
        const args = JSON.parse(`{"text":"${'x'.repeat(10_000)}${i}"}`) as object;
        refs.push(new WeakRef(args));
        trail.record(call(args));
      }
      return refs;
    };

    const trail = new AuditTrail(new MemoryAuditLog(60_000), { arguments: false, file: null, log: pino({ level: 'silent' }) });
    const kept = record(trail);
    await trail.flush();
    expect(await collected(kept)).toBe(0);

    const down = new AuditTrail(
      {
        append: () => Promise.reject(new Error('down')),
        newest: () => Promise.resolve([]),
        oldest: () => Promise.resolve([]),
      },
      { arguments: false, file: null, log: pino({ level: 'silent' }) },
    );
    const waiting = record(down);
    await down.flush();
    expect(await collected(waiting)).toBe(0);
    await down.close();
  });
});

describe('the audit trail while Redis is down', () => {
  it('keeps the entries and writes them, in order, once Redis is back', async () => {
    const redis = await RedisServer.start();
    const store = new RedisStore({ url: redis.url }, { keyPrefix: 'test:audit-outage:', sessionTtlS: 60, sessionMaxEvents: 10 }, pino({ level: 'silent' }));
    closers.push(async () => {
      await store.close();
      await redis.stop();
    });
    await store.waitUntilReady();
    const trail = new AuditTrail(store.audit, { arguments: false, file: null, log: pino({ level: 'silent' }) });
    trail.record({ kind: 'admin', caller: 'ops', outcome: '204', detail: 'before' });
    await trail.flush();
    await redis.stop();
    for (const detail of ['during 1', 'during 2']) trail.record({ kind: 'admin', caller: 'ops', outcome: '204', detail });
    await trail.flush();
    await redis.restart();
    await store.waitUntilReady(5000);
    await expect
      .poll(async () => (await store.audit.oldest(0, 10).catch(() => [])).map((e) => JSON.parse(e.body).detail), { timeout: 8000 })
      .toEqual(['during 1', 'during 2']);
    await trail.close();
  });
});
