/** The credential records of the store behave the same on memory and on a real Redis. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialStore } from '../../src/store/credentials.ts';
import { STORES, makeApp } from '../helpers/app.ts';

describe.each(STORES)('credential records on the %s store', (kind) => {
  let app: FastifyInstance;
  let store: CredentialStore;
  beforeAll(async () => {
    app = await makeApp(kind);
    store = app.toolport.store.credentials;
  });
  afterAll(() => app.close());

  const record = (name: string, sealed = 'tp1.k.x') => ({ name, kind: 'oauth2' as const, sealed, scopes: ['repo'], expiresAt: 1000, updatedAt: 1 });

  it('keeps records per owner, with a version that each write raises', async () => {
    expect(await store.get('user:a', 'github')).toBeNull();
    expect((await store.put('user:a', record('github')))?.version).toBe(1);
    expect((await store.put('user:a', record('github', 'tp1.k.y')))?.version).toBe(2);
    expect(await store.get('user:a', 'github')).toMatchObject({ sealed: 'tp1.k.y', scopes: ['repo'], expiresAt: 1000, version: 2 });
    expect(await store.get('user:b', 'github')).toBeNull();
    await store.put('user:a', { ...record('weather'), kind: 'secret', expiresAt: null });
    expect((await store.list('user:a')).map((r) => r.name).sort()).toEqual(['github', 'weather']);
    expect(await store.list('user:b')).toEqual([]);
  });

  it('writes over the expected version only (compare-and-set)', async () => {
    const current = (await store.get('user:a', 'github'))!;
    expect(await store.put('user:a', record('github', 'tp1.k.late'), current.version - 1)).toBeNull();
    expect((await store.put('user:a', record('github', 'tp1.k.won'), current.version))?.version).toBe(current.version + 1);
    expect(await store.put('user:a', record('github', 'tp1.k.second'), current.version)).toBeNull();
    expect((await store.get('user:a', 'github'))!.sealed).toBe('tp1.k.won');
    expect((await store.put('user:c', record('github'), 0))?.version).toBe(1);
  });

  it('deletes a record once', async () => {
    expect(await store.delete('user:a', 'weather')).toBe(true);
    expect(await store.delete('user:a', 'weather')).toBe(false);
  });

  it('gives a lease to one holder at a time, and back only to its holder', async () => {
    expect(await store.lease('user:a', 'github', 'one', 10_000)).toBe(true);
    expect(await store.lease('user:a', 'github', 'two', 10_000)).toBe(false);
    await store.release('user:a', 'github', 'two');
    expect(await store.lease('user:a', 'github', 'two', 10_000)).toBe(false);
    await store.release('user:a', 'github', 'one');
    expect(await store.lease('user:a', 'github', 'two', 10_000)).toBe(true);
    await store.release('user:a', 'github', 'two');
  });

  it('takes a single-use token once', async () => {
    await store.putOnce('link', 'abc', '{"owner":"user:a"}', 60_000);
    const [first, second] = await Promise.all([store.takeOnce('link', 'abc'), store.takeOnce('link', 'abc')]);
    expect([first, second].filter((v) => v !== null)).toEqual(['{"owner":"user:a"}']);
    expect(await store.takeOnce('state', 'abc')).toBeNull();
  });

  it('shows a single-use token without taking it, until it is taken', async () => {
    await store.putOnce('link', 'peek', '{"owner":"user:b"}', 60_000);
    expect(await store.peekOnce('link', 'peek')).toBe('{"owner":"user:b"}');
    expect(await store.peekOnce('link', 'peek')).toBe('{"owner":"user:b"}');
    expect(await store.peekOnce('state', 'peek')).toBeNull();
    expect(await store.takeOnce('link', 'peek')).toBe('{"owner":"user:b"}');
    expect(await store.peekOnce('link', 'peek')).toBeNull();
  });
});
