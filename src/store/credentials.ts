/**
 * Credentials per owner (docs/credentials.md): each record holds its secret material sealed (never
 * plaintext: the store sees ciphertext, scopes and expiry only), a version for compare-and-set,
 * a short lease so one replica refreshes a token, and single-use tokens (connect links, OAuth
 * states) that are taken once. Each backend (memory/, redis/) keeps them alike.
 */

export type CredentialKind = 'oauth2' | 'secret';

export interface CredentialRecord {
  readonly name: string;
  readonly kind: CredentialKind;
  /** The sealed secret material (src/credentials/cipher.ts). */
  readonly sealed: string;
  readonly scopes: readonly string[];
  /** Epoch ms when the access token expires; null when it does not say. */
  readonly expiresAt: number | null;
  /** Epoch ms of the last write (a grant, a refresh, a value put). */
  readonly updatedAt: number;
  /** 1 for the first write, one more for each write after. */
  readonly version: number;
}

export type CredentialWrite = Omit<CredentialRecord, 'version'>;

/** What a single-use token is for: a connect link, or an OAuth state waiting for its callback. */
export type OnceKind = 'link' | 'state';

export interface CredentialStore {
  get(owner: string, name: string): Promise<CredentialRecord | null>;
  /** The owner's records, in no particular order. */
  list(owner: string): Promise<CredentialRecord[]>;
  /**
   * Writes the record; with `expectVersion` only over that version (0: only when there is none).
   * Returns the record written, or null when the version did not match (nothing changed).
   */
  put(owner: string, record: CredentialWrite, expectVersion?: number): Promise<CredentialRecord | null>;
  /** True when there was a record to remove. */
  delete(owner: string, name: string): Promise<boolean>;
  /** Takes the refresh lease of one record for `ttlMs` unless another holder has it; true when taken. */
  lease(owner: string, name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease back, if `holder` still has it. */
  release(owner: string, name: string, holder: string): Promise<void>;
  /** Keeps `value` under `id` until taken or `ttlMs` passed. */
  putOnce(kind: OnceKind, id: string, value: string, ttlMs: number): Promise<void>;
  /** The value, removed in the same step: a second take finds nothing. */
  takeOnce(kind: OnceKind, id: string): Promise<string | null>;
  /** The value while it is there (not taken, not expired), left in place. */
  peekOnce(kind: OnceKind, id: string): Promise<string | null>;
}
