import { describe, it, expect } from 'vitest';
import { MAX_JSON_DEPTH, deepFreeze, exceedsDepth, parseJson } from '../../src/json.ts';
import { JsonInputError } from '../../src/errors.ts';

const nestedArrays = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const nestedObjects = (depth: number): string => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);

describe('parseJson', () => {
  it('parses ordinary JSON into the same value JSON.parse gives', () => {
    const text = '{"name":"add","arguments":{"a":2,"b":-3.25,"list":[true,false,null,"x"]},"nested":{"deep":[{"k":"v"}]}}';
    expect(parseJson(text)).toEqual(JSON.parse(text));
  });

  it('refuses text that is not JSON with a JsonInputError', () => {
    expect(() => parseJson('{"a":')).toThrow(JsonInputError);
    expect(() => parseJson('not json')).toThrow(JsonInputError);
  });

  it(`accepts nesting of exactly MAX_JSON_DEPTH (${MAX_JSON_DEPTH}) levels`, () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(() => parseJson(nestedArrays(64))).not.toThrow();
    expect(() => parseJson(nestedObjects(64))).not.toThrow();
  });

  it('refuses nesting one level deeper than MAX_JSON_DEPTH', () => {
    expect(() => parseJson(nestedArrays(65))).toThrow(JsonInputError);
    expect(() => parseJson(nestedObjects(65))).toThrow(/deeper than 64/);
  });

  it('refuses 10,000 levels of nesting with a JsonInputError, not a stack overflow', () => {
    expect(() => parseJson(nestedArrays(10_000))).toThrow(JsonInputError);
    expect(() => parseJson(nestedObjects(10_000))).toThrow(JsonInputError);
  });

  it('does not count brackets inside strings toward the depth', () => {
    const brackets = '[{'.repeat(200);
    const value = parseJson(JSON.stringify({ text: brackets, escaped: 'a \\" [[[ {{{ "' }));
    expect(value).toEqual({ text: brackets, escaped: 'a \\" [[[ {{{ "' });
  });

  it('refuses integers beyond 2^53 that JSON.parse would silently change', () => {
    expect(() => parseJson('{"id":9007199254740993}')).toThrow(JsonInputError);
    expect(() => parseJson('[-9007199254740993]')).toThrow(JsonInputError);
    expect(() => parseJson('123456789012345678901234567890')).toThrow(/beyond 2\^53/);
  });

  it('accepts the largest exact integer, floats and big digits inside strings', () => {
    expect(parseJson('{"id":9007199254740991}')).toEqual({ id: 9_007_199_254_740_991 });
    expect(parseJson('[-9007199254740991]')).toEqual([-9_007_199_254_740_991]);
    expect(parseJson('{"x":1.5e300}')).toEqual({ x: 1.5e300 });
    expect(parseJson('{"id":"9007199254740993"}')).toEqual({ id: '9007199254740993' });
  });

  it('refuses a __proto__ key and leaves Object.prototype untouched', () => {
    expect(() => parseJson('{"__proto__":{"x":1}}')).toThrow(JsonInputError);
    expect(() => parseJson('{"a":{"__proto__":{"polluted":true}}}')).toThrow(JsonInputError);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a constructor.prototype key and leaves Object.prototype untouched', () => {
    expect(() => parseJson('{"constructor":{"prototype":{}}}')).toThrow(JsonInputError);
    expect(() => parseJson('{"constructor":{"prototype":{"polluted":true}}}')).toThrow(JsonInputError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('exceedsDepth', () => {
  it('measures depth the same way parseJson does: 64 levels pass, 65 do not', () => {
    expect(exceedsDepth(JSON.parse(nestedArrays(64)))).toBe(false);
    expect(exceedsDepth(JSON.parse(nestedArrays(65)))).toBe(true);
    expect(exceedsDepth(JSON.parse(nestedObjects(65)))).toBe(true);
  });

  it('treats scalars as never too deep and honours a custom limit', () => {
    expect(exceedsDepth(42)).toBe(false);
    expect(exceedsDepth(null)).toBe(false);
    expect(exceedsDepth({ a: { b: 1 } }, 2)).toBe(false);
    expect(exceedsDepth({ a: { b: {} } }, 2)).toBe(true);
  });

  it('handles a value nested 10,000 levels deep without overflowing the stack', () => {
    let value: unknown = [];
    for (let i = 0; i < 10_000; i++) value = [value];
    expect(exceedsDepth(value)).toBe(true);
  });
});

describe('deepFreeze', () => {
  it('freezes the value and every nested object and array', () => {
    const value = deepFreeze({ a: { b: [1, { c: 'x' }] }, list: [[2]] });
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a.b)).toBe(true);
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
    expect(Object.isFrozen(value.list[0])).toBe(true);
    expect(() => {
      (value.a.b as unknown[]).push(3);
    }).toThrow(TypeError);
  });

  it('returns the same value and leaves scalars as they are', () => {
    const value = { a: 1 };
    expect(deepFreeze(value)).toBe(value);
    expect(deepFreeze('text')).toBe('text');
    expect(deepFreeze(null)).toBeNull();
  });
});
