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
