/**
 * One matcher over the secrets toolport knows (docs/operations.md#secrets-never-reach-the-model),
 * built once per set of secrets. A few secrets are looked for one by one with `includes` (native,
 * fast); more are found in one pass over the text with a rolling hash of their first characters
 * (Rabin–Karp), so a thousand secrets cost about what ten do. A found secret becomes
 * `[redacted:<name>]`.
 */

export interface KnownSecret {
  /** What the placeholder says: the variable, the credential, the key id — never the value. */
  readonly name: string;
  readonly value: string;
}

/** Shorter values are not taken: they would match ordinary text (a port, a word) everywhere. */
export const MIN_SECRET_CHARS = 8;
/** Up to this many secrets, one `includes` per secret beats a pass with the rolling hash. */
const FEW = 12;
const WINDOW = MIN_SECRET_CHARS;
const BASE = 31;
const BITS = 1 << 16;

function hashOf(text: string, from: number): number {
  let hash = 0;
  for (let i = from; i < from + WINDOW; i++) hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
}

/** BASE^(WINDOW-1), to take the leaving character out of the rolling hash. */
const OUT = (() => {
  let power = 1;
  for (let i = 1; i < WINDOW; i++) power = Math.imul(power, BASE);
  return power;
})();

export class SecretMatcher {
  static readonly EMPTY = new SecretMatcher([]);
  /** Longest first, so that a secret containing another is replaced whole. */
  readonly #secrets: readonly KnownSecret[];
  /** Hash of a secret's first WINDOW characters → the secrets starting so (many only). */
  readonly #byHash: Map<number, KnownSecret[]> | null = null;
  /** A bit per hash value (low 16 bits): most positions are dismissed by one array read. */
  readonly #bits: Uint8Array | null = null;

  constructor(secrets: Iterable<KnownSecret>) {
    const byValue = new Map<string, KnownSecret>();
    for (const secret of secrets) if (secret.value.length >= MIN_SECRET_CHARS && !byValue.has(secret.value)) byValue.set(secret.value, secret);
    this.#secrets = [...byValue.values()].sort((a, b) => b.value.length - a.value.length);
    if (this.#secrets.length <= FEW) return;
    this.#byHash = new Map();
    this.#bits = new Uint8Array(BITS >> 3);
    for (const secret of this.#secrets) {
      const hash = hashOf(secret.value, 0);
      const same = this.#byHash.get(hash);
      if (same === undefined) this.#byHash.set(hash, [secret]);
      else same.push(secret);
      this.#bits[(hash & (BITS - 1)) >> 3]! |= 1 << (hash & 7);
    }
  }

  get size(): number {
    return this.#secrets.length;
  }

  /** The text with every known secret replaced by `[redacted:<name>]`; the same string when none is in it. */
  redact(text: string): string {
    if (text.length < MIN_SECRET_CHARS || this.#secrets.length === 0) return text;
    return this.#byHash === null ? this.#redactFew(text) : this.#redactMany(text);
  }

  #redactFew(text: string): string {
    let out = text;
    for (const secret of this.#secrets) {
      if (out.includes(secret.value)) out = out.replaceAll(secret.value, `[redacted:${secret.name}]`);
    }
    return out;
  }

  #redactMany(text: string): string {
    const bits = this.#bits!;
    let out = '';
    let copied = 0;
    let hash = hashOf(text, 0);
    const last = text.length - WINDOW;
    for (let i = 0; i <= last;) {
      let found: KnownSecret | undefined;
      if ((bits[(hash & (BITS - 1)) >> 3]! & (1 << (hash & 7))) !== 0) {
        found = this.#byHash!.get(hash)?.find((secret) => text.startsWith(secret.value, i));
      }
      if (found !== undefined) {
        out += `${text.slice(copied, i)}[redacted:${found.name}]`;
        i += found.value.length;
        copied = i;
        if (i <= last) hash = hashOf(text, i);
        continue;
      }
      if (i < last) hash = (Math.imul(hash - Math.imul(text.charCodeAt(i), OUT), BASE) + text.charCodeAt(i + WINDOW)) | 0;
      i++;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }

  /**
   * A copy of a JSON-like value with every string redacted (object keys kept); the very same value
   * when nothing was found, so a clean result costs no allocation. Other objects (a Buffer, a
   * class instance) are left as they are.
   */
  redactValue<T>(value: T): T {
    if (this.#secrets.length === 0) return value;
    return this.#walk(value, 0) as T;
  }

  #walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (value === null || typeof value !== 'object' || depth > 64) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        const item = this.#walk(value[i], depth + 1);
        if (item !== value[i]) (copy ??= value.slice())[i] = item;
      }
      return copy ?? value;
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return value;
    let copy: Record<string, unknown> | null = null;
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      const redacted = this.#walk(item, depth + 1);
      if (redacted !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = redacted;
    }
    return copy ?? value;
  }
}
