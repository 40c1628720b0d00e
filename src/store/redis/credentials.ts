/**
 * Credentials in Redis: one hash per owner (`<prefix>{cred:<owner>}`, field = credential name,
 * value = "<version>|<record JSON>" holding only sealed material), a lease key beside it for the
 * refresh, and single-use tokens taken with GETDEL. An owner's keys share one hash tag.
 */
import type { CredentialRecord, CredentialStore, CredentialWrite, OnceKind } from '../credentials.ts';
import type { CommandGuard } from './ledger.ts';
import { defineScripts, type RedisClient } from './scripts.ts';

type Client = RedisClient & {
  credentialPut(records: string, name: string, expect: string, json: string): Promise<number>;
  leaseRelease(lease: string, holder: string): Promise<number>;
};

function parse(name: string, stored: string): CredentialRecord {
  const bar = stored.indexOf('|');
  return { ...(JSON.parse(stored.slice(bar + 1)) as Omit<CredentialRecord, 'version' | 'name'>), name, version: Number(stored.slice(0, bar)) };
}

export class RedisCredentials implements CredentialStore {
  readonly #client: Client;
  readonly #prefix: string;
  readonly #guard: CommandGuard;

  constructor(client: RedisClient, keyPrefix: string, guard: CommandGuard) {
    defineScripts(client, { credentialPut: 1, leaseRelease: 1 });
    this.#client = client as Client;
    this.#prefix = keyPrefix;
    this.#guard = guard;
  }

  #records(owner: string): string {
    return `${this.#prefix}{cred:${encodeURIComponent(owner)}}`;
  }

  #lease(owner: string, name: string): string {
    return `${this.#records(owner)}:lease:${encodeURIComponent(name)}`;
  }

  #once(kind: OnceKind, id: string): string {
    return `${this.#prefix}{once:${kind}:${id}}`;
  }

  async get(owner: string, name: string): Promise<CredentialRecord | null> {
    const stored = await this.#guard(() => this.#client.hget(this.#records(owner), name));
    return stored === null ? null : parse(name, stored);
  }

  async list(owner: string): Promise<CredentialRecord[]> {
    const all = await this.#guard(() => this.#client.hgetall(this.#records(owner)));
    return Object.entries(all).map(([name, stored]) => parse(name, stored));
  }

  async put(owner: string, record: CredentialWrite, expectVersion?: number): Promise<CredentialRecord | null> {
    const { name, ...rest } = record;
    const version = await this.#guard(() =>
      this.#client.credentialPut(this.#records(owner), name, expectVersion === undefined ? '' : String(expectVersion), JSON.stringify(rest)),
    );
    return version === -1 ? null : { ...record, version };
  }

  async delete(owner: string, name: string): Promise<boolean> {
    return (await this.#guard(() => this.#client.hdel(this.#records(owner), name))) === 1;
  }

  async lease(owner: string, name: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.#guard(() => this.#client.set(this.#lease(owner, name), holder, 'PX', ttlMs, 'NX'))) === 'OK';
  }

  async release(owner: string, name: string, holder: string): Promise<void> {
    await this.#guard(() => this.#client.leaseRelease(this.#lease(owner, name), holder));
  }

  async putOnce(kind: OnceKind, id: string, value: string, ttlMs: number): Promise<void> {
    await this.#guard(() => this.#client.set(this.#once(kind, id), value, 'PX', ttlMs));
  }

  async takeOnce(kind: OnceKind, id: string): Promise<string | null> {
    return this.#guard(() => this.#client.getdel(this.#once(kind, id)));
  }

  async peekOnce(kind: OnceKind, id: string): Promise<string | null> {
    return this.#guard(() => this.#client.get(this.#once(kind, id)));
  }
}
