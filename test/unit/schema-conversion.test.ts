/** OpenAI strict-mode qualification and the Gemini schema subset, on schemas that fit and ones that do not. */
import { describe, expect, it } from 'vitest';
import { toGeminiSchema } from '../../src/formats/gemini-schema.ts';
import { qualifiesForStrict } from '../../src/formats/strict.ts';

const closed = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});

describe('OpenAI strict mode', () => {
  it('qualifies a closed schema whose every property is required, nested objects, arrays, enums, anyOf and $defs included', () => {
    expect(qualifiesForStrict(closed({ location: { type: 'string' }, unit: { type: ['string', 'null'], enum: ['c', 'f', null] } }))).toBe(true);
    expect(qualifiesForStrict(closed({ point: closed({ x: { type: 'number', minimum: 0 }, y: { type: 'number' } }) }))).toBe(true);
    expect(qualifiesForStrict(closed({ tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' }, maxItems: 5 } }))).toBe(true);
    expect(qualifiesForStrict(closed({ when: { type: 'string', format: 'date-time' } }))).toBe(true);
    expect(qualifiesForStrict(closed({ v: { anyOf: [{ type: 'string' }, { type: 'integer' }] } }))).toBe(true);
    expect(qualifiesForStrict(closed({ step: { $ref: '#/$defs/step' } }, { $defs: { step: closed({ title: { type: 'string' } }) } }))).toBe(true);
    expect(qualifiesForStrict(closed({}))).toBe(true);
  });

  it('refuses an optional property, an open object, or a nested object that is either', () => {
    expect(
      qualifiesForStrict({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'], additionalProperties: false }),
    ).toBe(false);
    expect(qualifiesForStrict({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })).toBe(false);
    expect(qualifiesForStrict(closed({ p: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } }))).toBe(false);
    expect(
      qualifiesForStrict(closed({ list: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } }, additionalProperties: false } } })),
    ).toBe(false);
  });

  it('refuses keywords strict mode does not support', () => {
    for (const unsupported of [
      { type: 'string', minLength: 1 },
      { type: 'string', format: 'uri' },
      { type: 'string', default: 'x' },
      { type: 'array', items: { type: 'string' }, uniqueItems: true },
      { allOf: [{ type: 'string' }] },
      { type: 'string', not: { enum: ['x'] } },
      { type: 'object', properties: {}, required: [], additionalProperties: false, patternProperties: { '^x': { type: 'string' } } },
    ]) {
      expect(qualifiesForStrict(closed({ field: unsupported })), JSON.stringify(unsupported)).toBe(false);
    }
    expect(qualifiesForStrict({ anyOf: [closed({})], type: 'object' })).toBe(false);
  });

  it('refuses nesting deeper than 10 levels', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 11; i++) schema = closed({ inner: schema });
    expect(qualifiesForStrict(schema)).toBe(false);
  });
});

describe('Gemini schema subset', () => {
  it('keeps what Gemini takes, with its type names and int64 counts as strings', () => {
    const schema = closed({
      brightness: { type: 'integer', minimum: 0, maximum: 100, description: 'Light level' },
      color_temp: { type: 'string', enum: ['daylight', 'cool', 'warm'] },
      tags: { type: 'array', items: { type: 'string', maxLength: 10 }, minItems: 1 },
      when: { type: 'string', format: 'date-time' },
    });
    expect(toGeminiSchema(schema)).toEqual({
      type: 'OBJECT',
      properties: {
        brightness: { type: 'INTEGER', minimum: 0, maximum: 100, description: 'Light level' },
        color_temp: { type: 'STRING', enum: ['daylight', 'cool', 'warm'] },
        tags: { type: 'ARRAY', items: { type: 'STRING', maxLength: '10' }, minItems: '1' },
        when: { type: 'STRING', format: 'date-time' },
      },
      required: ['brightness', 'color_temp', 'tags', 'when'],
    });
  });

  it('drops the keywords Gemini refuses and resolves what it can', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
      properties: {
        id: { type: 'string', format: 'uuid', minLength: 36 },
        count: { type: 'integer', exclusiveMinimum: 0, multipleOf: 2, enum: [2, 4] },
        kind: { const: 'point' },
        note: { type: ['string', 'null'] },
        step: { $ref: '#/$defs/step' },
        mixed: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        both: { allOf: [{ type: 'string' }], not: { const: 'x' } },
        tuple: { type: 'array', prefixItems: [{ type: 'string' }], uniqueItems: true },
      },
      required: ['id', 'missing'],
      $defs: { step: { type: 'object', properties: { title: { type: 'string' } }, additionalProperties: false } },
    };
    expect(toGeminiSchema(schema)).toEqual({
      type: 'OBJECT',
      properties: {
        id: { type: 'STRING', minLength: '36' },
        count: { type: 'INTEGER' },
        kind: { type: 'STRING', enum: ['point'] },
        note: { type: 'STRING', nullable: true },
        step: { type: 'OBJECT', properties: { title: { type: 'STRING' } } },
        mixed: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] },
        both: {},
        tuple: { type: 'ARRAY' },
      },
      required: ['id'],
    });
  });

  it('turns a recursive reference into an object of any shape instead of looping', () => {
    const schema = closed(
      { tree: { $ref: '#/$defs/node' } },
      { $defs: { node: { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/node' } } } } } },
    );
    expect(toGeminiSchema(schema).properties?.tree).toEqual({ type: 'OBJECT', properties: { children: { type: 'ARRAY', items: { type: 'OBJECT' } } } });
  });
});
