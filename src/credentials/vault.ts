/**
 * The vault (docs/credentials.md): each user's credentials, sealed in the store under the user's id, opened
 * only here. An oauth2 token about to expire is refreshed first, by one replica at a time (a
 * lease in the store; the others use the still-valid token or wait for the new one), and written
 * over the version it was read at. Connect links and OAuth states are single-use store tokens,
 * kept under their SHA-256 so the store never holds a usable link.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditSink } from '../store/audit.ts';
import type { CredentialRecord, CredentialStore, CredentialWrite } from '../store/credentials.ts';
import { type SecretsCipher } from './cipher.ts';
import type { CredentialDefinition, CredentialDefinitions, OAuth2Definition } from './definitions.ts';
import { refreshGrant, type Grant } from './oauth.ts';
import { LinkRefused, ProviderError, SealBroken } from '../errors.ts';

export const LINK_TTL_MS = 10 * 60_000;
/** The longest a refresh may hold its lease (the token endpoint's own timeout is 10 s). */
const LEASE_MS = 15_000;
/** How long a call waits for another replica's refresh of a token that has expired. */
const REFRESH_WAIT_MS = 5_000;
const REFRESH_POLL_MS = 100;
/** Refreshed this long before expiry at most (a quarter of a short lifetime at least). */
const REFRESH_MARGIN_MS = 60_000;

/** What a sealed record holds: an oauth2 grant's tokens, or a secret's value. */
interface Material {
  access?: string;
  refresh?: string | null;
  value?: string;
}

/** A connection as its owner may see it: never the secret itself. */
export interface ConnectionInfo {
  name: string;
  type: 'oauth2' | 'secret';
  scopes: readonly string[];
  /** ISO time the access token expires (refreshed before), null when it does not. */
  expires_at: string | null;
  updated_at: string;
}

export interface VaultOptions {
  definitions: CredentialDefinitions;
  store: CredentialStore;
  cipher: SecretsCipher;
  /** Bound into every sealed value: who vouches for the user ids (AUTH_ISSUER, or the API keys). */
  issuer: string;
  /** PUBLIC_URL, without a trailing slash. */
  publicUrl: string;
  log: Logger;
  /** The audit log (docs/audit.md): every connection made, value stored and connection removed. */
  audit?: AuditSink | null;
}

const digest = (token: string) => createHash('sha256').update(token).digest('base64url');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function refreshDue(record: CredentialRecord, now = Date.now()): boolean {
  if (record.expiresAt === null) return false;
  const margin = Math.min(REFRESH_MARGIN_MS, Math.max(0, (record.expiresAt - record.updatedAt) / 4));
  return now >= record.expiresAt - margin;
}

/** What a connect link is bound to: the owner, the credential, and the person's name when known. */
export interface BoundLink {
  owner: string;
  name: string;
  display?: string;
}

function checkLink(stored: string, name: string, visitor: string | null): BoundLink {
  const bound = JSON.parse(stored) as BoundLink;
  if (bound.name !== name) throw new LinkRefused('this link belongs to another connection.');
  if (visitor !== null && visitor !== bound.owner) throw new LinkRefused('this link was made for another user.');
  return bound;
}

const expired = (record: CredentialRecord) => record.expiresAt !== null && Date.now() >= record.expiresAt;

export class Vault {
  readonly #o: VaultOptions;
  readonly #stored: ((owner: string, name: string) => Promise<unknown>)[] = [];

  constructor(options: VaultOptions) {
    this.#o = options;
  }

  /** Calls `listener` after each connection made or value stored (tasks waiting for it run again). */
  onStored(listener: (owner: string, name: string) => Promise<unknown>): void {
    this.#stored.push(listener);
  }

  #announce(owner: string, name: string): void {
    for (const listener of this.#stored) {
      listener(owner, name).catch((err: unknown) => this.#o.log.warn({ err, credential: name, owner }, 'tasks waiting for a connection were not resumed'));
    }
  }

  get definitions(): CredentialDefinitions {
    return this.#o.definitions;
  }

  definition(name: string): CredentialDefinition | undefined {
    return this.#o.definitions.get(name);
  }

  #binding(owner: string, name: string): string {
    return `toolport credential\n${this.#o.issuer}\n${owner}\n${name}`;
  }

  #seal(owner: string, name: string, material: Material): string {
    return this.#o.cipher.seal(JSON.stringify(material), this.#binding(owner, name));
  }

  /** The record's material; null when its seal does not open (logged, never shown). */
  #open(owner: string, record: CredentialRecord): Material | null {
    try {
      const opened = this.#o.cipher.open(record.sealed, this.#binding(owner, record.name));
      const material = JSON.parse(opened.plaintext) as Material;
      if (opened.stale) void this.#write(owner, record.name, record.kind, material, record, record.version).catch(() => {});
      return material;
    } catch (err) {
      if (!(err instanceof SealBroken)) throw err;
      this.#o.log.warn({ credential: record.name, owner, reason: err.message }, 'a stored credential does not open: treated as not connected');
      return null;
    }
  }

  #write(
    owner: string,
    name: string,
    kind: 'oauth2' | 'secret',
    material: Material,
    meta: Pick<CredentialWrite, 'scopes' | 'expiresAt' | 'updatedAt'>,
    expectVersion?: number,
  ) {
    return this.#o.store.put(
      owner,
      { name, kind, sealed: this.#seal(owner, name, material), scopes: meta.scopes, expiresAt: meta.expiresAt, updatedAt: meta.updatedAt },
      expectVersion,
    );
  }

  /** The owner's token (oauth2, refreshed when due) or value (secret); null when there is none to use. */
  async secret(owner: string, name: string): Promise<string | null> {
    const definition = this.#o.definitions.get(name);
    const record = definition === undefined ? null : await this.#o.store.get(owner, name);
    if (record === null || definition === undefined) return null;
    if (definition.kind === 'secret') return this.#open(owner, record)?.value ?? null;
    if (!refreshDue(record)) return this.#open(owner, record)?.access ?? null;
    return this.#refreshed(owner, definition, record);
  }

  async #refreshed(owner: string, definition: OAuth2Definition, seen: CredentialRecord): Promise<string | null> {
    const { store, log } = this.#o;
    const holder = randomUUID();
    if (!(await store.lease(owner, definition.name, holder, LEASE_MS))) {
      // Another replica (or call) refreshes: a token not yet expired still works meanwhile.
      if (!expired(seen)) return this.#open(owner, seen)?.access ?? null;
      return this.#awaitRefresh(owner, seen);
    }
    try {
      const record = await store.get(owner, definition.name);
      if (record === null) return null;
      const material = this.#open(owner, record);
      if (material === null) return null;
      if (!refreshDue(record)) return material.access ?? null; // refreshed meanwhile
      if (typeof material.refresh !== 'string') return expired(record) ? null : (material.access ?? null);
      let grant: Grant;
      try {
        grant = await refreshGrant(definition, material.refresh);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        log.warn({ credential: definition.name, owner, reason }, 'the refresh of a credential failed');
        if (err instanceof ProviderError && err.revoked) await store.delete(owner, definition.name);
        return null;
      }
      await this.#write(
        owner,
        definition.name,
        'oauth2',
        { access: grant.accessToken, refresh: grant.refreshToken },
        { scopes: grant.scopes, expiresAt: grant.expiresAt, updatedAt: Date.now() },
        record.version,
      );
      log.info({ credential: definition.name, owner }, 'credential refreshed');
      return grant.accessToken;
    } finally {
      await store.release(owner, definition.name, holder).catch(() => {});
    }
  }

  /** Waits for another holder's refresh of an expired token: the new version, or null after REFRESH_WAIT_MS. */
  async #awaitRefresh(owner: string, seen: CredentialRecord): Promise<string | null> {
    const until = Date.now() + REFRESH_WAIT_MS;
    while (Date.now() < until) {
      await sleep(REFRESH_POLL_MS);
      const record = await this.#o.store.get(owner, seen.name);
      if (record === null) return null;
      if (record.version !== seen.version && !expired(record)) return this.#open(owner, record)?.access ?? null;
    }
    return null;
  }

  /** A single-use link (LINK_TTL_MS) where the owner connects `name`; `display` names the person on its page. */
  async connectLink(owner: string, name: string, display?: string | null): Promise<string> {
    const link = randomBytes(32).toString('base64url');
    const bound: BoundLink = { owner, name, ...(typeof display === 'string' && display !== '' && { display }) };
    await this.#o.store.putOnce('link', digest(link), JSON.stringify(bound), LINK_TTL_MS);
    return `${this.#o.publicUrl}/connections/${encodeURIComponent(name)}/start?link=${link}`;
  }

  /**
   * Reads a connect link without spending it (its confirmation page): what it was made for, or
   * null when it was used, has expired or never existed. Refused like `takeLink` for another name or user.
   */
  async peekLink(name: string, link: string, visitor: string | null): Promise<BoundLink | null> {
    const stored = await this.#o.store.peekOnce('link', digest(link));
    return stored === null ? null : checkLink(stored, name, visitor);
  }

  /**
   * Takes a connect link (once): the owner it was made for. A `visitor` who is known (sent a key
   * or token) and is not that owner is refused; the link is spent either way.
   */
  async takeLink(name: string, link: string, visitor: string | null): Promise<string> {
    const stored = await this.#o.store.takeOnce('link', digest(link));
    if (stored === null)
      throw new LinkRefused(
        'this link is not valid: it was used already, has expired (links last 10 minutes), or never existed. Ask for the tool again to get a new link.',
      );
    return checkLink(stored, name, visitor).owner;
  }

  /** A single-use state for the step after the link (the provider's callback, or the secret's form). */
  async newState(owner: string, name: string, extra: Record<string, string> = {}): Promise<string> {
    const state = randomBytes(32).toString('base64url');
    const sealed = this.#o.cipher.seal(JSON.stringify({ owner, name, ...extra }), `toolport connect state\n${this.#o.issuer}\n${name}`);
    await this.#o.store.putOnce('state', digest(state), sealed, LINK_TTL_MS);
    return state;
  }

  /** Takes a state (once): what it was made with. A state unknown, used, expired or for another name is refused. */
  async takeState(name: string, state: string): Promise<{ owner: string } & Record<string, string>> {
    const sealed = await this.#o.store.takeOnce('state', digest(state));
    if (sealed === null)
      throw new LinkRefused('this sign-in is not valid: it was completed already, has expired, or was changed. Start again from a new link.');
    try {
      return JSON.parse(this.#o.cipher.open(sealed, `toolport connect state\n${this.#o.issuer}\n${name}`).plaintext) as { owner: string } & Record<
        string,
        string
      >;
    } catch {
      throw new LinkRefused('this sign-in belongs to another connection.');
    }
  }

  /** Stores an oauth2 grant (a new connection replaces the old one). */
  async storeGrant(owner: string, name: string, grant: Grant): Promise<void> {
    await this.#write(
      owner,
      name,
      'oauth2',
      { access: grant.accessToken, refresh: grant.refreshToken },
      { scopes: grant.scopes, expiresAt: grant.expiresAt, updatedAt: Date.now() },
    );
    this.#o.log.info({ credential: name, owner }, 'credential connected');
    this.#o.audit?.record({ kind: 'credential', caller: owner, onBehalfOf: owner, outcome: 'connected', detail: name });
    this.#announce(owner, name);
  }

  async putSecret(owner: string, name: string, value: string): Promise<void> {
    await this.#write(owner, name, 'secret', { value }, { scopes: [], expiresAt: null, updatedAt: Date.now() });
    this.#o.log.info({ credential: name, owner }, 'credential stored');
    this.#o.audit?.record({ kind: 'credential', caller: owner, onBehalfOf: owner, outcome: 'stored', detail: name });
    this.#announce(owner, name);
  }

  async connections(owner: string): Promise<ConnectionInfo[]> {
    const records = await this.#o.store.list(owner);
    return records
      .filter((r) => this.#o.definitions.has(r.name))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((r) => ({
        name: r.name,
        type: r.kind,
        scopes: r.scopes,
        expires_at: r.expiresAt === null ? null : new Date(r.expiresAt).toISOString(),
        updated_at: new Date(r.updatedAt).toISOString(),
      }));
  }

  async forget(owner: string, name: string): Promise<boolean> {
    const had = await this.#o.store.delete(owner, name);
    if (had) {
      this.#o.log.info({ credential: name, owner }, 'credential forgotten');
      this.#o.audit?.record({ kind: 'credential', caller: owner, onBehalfOf: owner, outcome: 'disconnected', detail: name });
    }
    return had;
  }
}
