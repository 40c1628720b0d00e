/**
 * JSON text → value, refusing what would break later work: nesting deeper than MAX_JSON_DEPTH
 * (recursive validation and canonicalization would overflow the stack), integers beyond 2^53
 * (JSON.parse would silently change them) and __proto__ / constructor.prototype keys.
 */
import secureJson from 'secure-json-parse';
import { JsonInputError } from './errors.ts';

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const MAX_JSON_DEPTH = 64;

/** One pass over the text outside strings: depth and integer literal size. */
function scan(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > MAX_JSON_DEPTH) throw new JsonInputError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    } else if (c === 125 || c === 93) depth--;
    else if ((c >= 48 && c <= 57) || c === 45 /* - */) {
      let end = i + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++;
      const literal = text.slice(i, end);
      if (/^-?\d{16,}$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
        throw new JsonInputError(`integer ${literal.slice(0, 40)} is beyond 2^53 and cannot be kept exactly; send it as a string`);
      }
      i = end - 1;
    }
  }
}

export function parseJson(text: string): unknown {
  scan(text);
  try {
    return secureJson(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    throw new JsonInputError(err instanceof Error ? err.message : 'not valid JSON');
  }
}

/**
 * Whether a value's JSON could be longer than `limit` characters, counted roughly (its strings and
 * keys, a few characters per other member) and stopping as soon as it is: small values cost a few
 * steps, a huge one no more than `limit` worth of them.
 */
export function jsonMayExceed(value: unknown, limit: number): boolean {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') size += node.length + 2;
    else if (node === null || typeof node !== 'object') size += 5;
    else if (Array.isArray(node)) {
      size += 2;
      for (const item of node as unknown[]) stack.push(item);
    } else {
      for (const key in node) {
        size += key.length + 4;
        stack.push((node as Record<string, unknown>)[key]);
      }
    }
    if (size > limit) return true;
  }
  return false;
}

/**
 * The same text, its characters in one piece: a text made by concatenation is a tree of its parts
 * until something reads it whole (V8's cons strings), about three times the size for an audit entry.
 * Converting it to a number reads it whole, flattening it; the number is not wanted.
 */
export function flatText(text: string): string {
  Number(text);
  return text;
}

/** Depth of an already-parsed value, iteratively (used for values that did not come from parseJson). */
export function exceedsDepth(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Freeze a JSON value and everything in it, so a handler cannot change what was validated and hashed. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop()!;
    Object.freeze(node);
    // for…in rather than Object.values: no array per object (JSON objects have no inherited keys).
    for (const key in node) {
      const child = (node as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) stack.push(child);
    }
  }
  return value;
}

/** Text that JSON writes as it is between quotes (ids, names, codes, hashes usually are). */
const PLAIN = /^[\w .:/@+=[\]-]*$/;

/** A string as JSON text (`null` for null or undefined), without JSON.stringify for the usual plain text. */
export function jsonString(text: string | null | undefined): string {
  return text == null ? 'null' : PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}

let isoSecond = Number.NaN;
let isoPrefix = '';

/** The ISO date of an epoch ms, reusing the text of its second when the last one was in the same second. */
export function isoDate(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    const iso = new Date(second * 1000).toISOString(); // 2026-01-02T03:04:05.000Z
    isoSecond = second;
    isoPrefix = iso.slice(0, 20);
  }
  const milli = Math.floor(ms - second * 1000);
  return `${isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
