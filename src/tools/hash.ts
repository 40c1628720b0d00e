/** Content hashes: SHA-256 (hex) of RFC 8785 canonical JSON. */
import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';

export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex'); // one-shot: no Hash object per call
}

export function hashJson(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

const SURROGATE = /[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * canonicalDataJson's memo for one batch of registrations (an upstream's operations, registered in
 * one go): dropped when the current task of the event loop ends, so the texts of every subschema
 * are not kept for the life of the catalog (for GitHub's document they were most of its heap).
 */
export class BatchMemo {
  #memo: WeakMap<object, string> | null = null;

  get(): WeakMap<object, string> {
    if (this.#memo === null) {
      this.#memo = new WeakMap();
      setImmediate(() => (this.#memo = null)).unref();
    }
    return this.#memo;
  }
}

/**
 * canonicalJson for JSON data that is never changed once written (upstream schemas): the same
 * text, with each object's text kept in `memo`, so a subschema shared by many definitions (as
 * OpenAPI components are) is written once.
 */
export function canonicalDataJson(value: unknown, memo: WeakMap<object, string>): string {
  if (typeof value === 'string') {
    if (SURROGATE.test(value) && LONE_SURROGATE.test(value)) throw new Error('Lone surrogate is not allowed');
    return JSON.stringify(value);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`${value} is not allowed`);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const known = memo.get(value);
  if (known !== undefined) return known;
  let text: string;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') text = canonicalJson(value);
  else if (Array.isArray(value)) {
    text = `[${value.map((item) => (item === undefined || typeof item === 'symbol' ? 'null' : canonicalDataJson(item, memo))).join(',')}]`;
  } else {
    const parts: string[] = [];
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record).sort()) {
      const item = record[key];
      if (item === undefined || typeof item === 'symbol') continue;
      parts.push(`${canonicalDataJson(key, memo)}:${canonicalDataJson(item, memo)}`);
    }
    text = `{${parts.join(',')}}`;
  }
  memo.set(value, text);
  return text;
}
