/**
 * TypeScript declarations of the tools a program may call (docs/code-mode.md), from their JSON
 * Schemas: one method of `tools` per tool, with its description and its parameters' descriptions as
 * doc comments. A small generator of its own (docs/design.md says why): synchronous, one pass, no
 * named interfaces, and kept per tool definition, so GitHub's 1,223 operations are declared in
 * milliseconds and a tool's declaration is made once.
 */
import { isObject } from '../../json.ts';
import type { RegisteredTool } from '../../tools/registry.ts';

type Schema = Record<string, unknown>;

const MAX_DEPTH = 6;
/** A result's type is a hint of its shape: nested objects past this depth are `object`, and it is made shallower until short. */
const RESULT_DEPTHS = [3, 2, 1, 0];
const MAX_RESULT_CHARS = 1500;
const MAX_DESCRIPTION_CHARS = 300;
const MAX_PROPERTY_NOTE_CHARS = 160;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const made = new WeakMap<RegisteredTool, string>();

/** A doc comment's text on one line, without anything that would end the comment. */
function note(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').replace(/\*\//g, '* /').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function key(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

function literal(value: unknown): string {
  const json = JSON.stringify(value);
  return json === undefined ? 'unknown' : json;
}

/** `#/$defs/x` or `#/definitions/x` inside the tool's own schema; anything else is unknown. */
function resolve(ref: string, root: Schema): Schema | null {
  const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  const defs = match === null ? undefined : root[match[1]!];
  const target = isObject(defs) ? defs[decodeURIComponent(match![2]!).replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isObject(target) ? target : null;
}

function union(types: string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length === 0 ? 'never' : unique.length === 1 ? unique[0]! : unique.map(parenthesize).join(' | ');
}

function parenthesize(type: string): string {
  return /^[\w$.]+(\[\])?$|^\{.*\}$|^"/.test(type) ? type : `(${type})`;
}

function typeOf(schema: unknown, root: Schema, depth: number, seen: ReadonlySet<string>, max = MAX_DEPTH): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (!isObject(schema) || depth > MAX_DEPTH) return 'unknown';
  const nullable = schema.nullable === true ? ' | null' : '';
  if (typeof schema.$ref === 'string') {
    const target = seen.has(schema.$ref) ? null : resolve(schema.$ref, root);
    return target === null ? 'unknown' : typeOf(target, root, depth + 1, new Set([...seen, schema.$ref]), max) + nullable;
  }
  if ('const' in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal)) + nullable;
  for (const combinator of ['anyOf', 'oneOf'] as const) {
    const options = schema[combinator];
    if (Array.isArray(options)) return union(options.map((s) => typeOf(s, root, depth + 1, seen, max))) + nullable;
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((s) => typeOf(s, root, depth + 1, seen, max)).filter((t) => t !== 'unknown');
    return parts.length === 0 ? 'unknown' : parts.map(parenthesize).join(' & ');
  }
  const types = Array.isArray(schema.type) ? schema.type : typeof schema.type === 'string' ? [schema.type] : null;
  if (types === null) return isObject(schema.properties) ? objectType(schema, root, depth, seen, max) : 'unknown';
  return union(types.map((type) => simpleType(String(type), schema, root, depth, seen, max))) + nullable;
}

function simpleType(type: string, schema: Schema, root: Schema, depth: number, seen: ReadonlySet<string>, max: number): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `${parenthesize(typeOf(schema.items, root, depth + 1, seen, max))}[]`;
    case 'object':
      return objectType(schema, root, depth, seen, max);
    default:
      return 'unknown';
  }
}

function objectType(schema: Schema, root: Schema, depth: number, seen: ReadonlySet<string>, max: number): string {
  if (depth > max) return 'object';
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const members = Object.entries(properties).map(
    ([name, property]) => `${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(property, root, depth + 1, seen, max)}`,
  );
  const extra = schema.additionalProperties;
  if (isObject(extra)) members.push(`[key: string]: ${typeOf(extra, root, depth + 1, seen, max)}`);
  else if (members.length === 0 && extra !== false) return 'Record<string, unknown>';
  return `{ ${members.join('; ')} }`;
}

/** The parameters, one per line with its description, for the top level; nested objects inline. */
function parametersOf(schema: Schema): { text: string; optional: boolean } {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const names = Object.keys(properties);
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  if (names.length === 0) return { text: '{}', optional: true };
  const lines = names.map((name) => {
    const property = properties[name];
    const description = isObject(property) && typeof property.description === 'string' ? property.description : '';
    const comment = description === '' ? '' : `    /** ${note(description, MAX_PROPERTY_NOTE_CHARS)} */\n`;
    return `${comment}    ${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(property, schema, 1, new Set())};`;
  });
  return { text: `{\n${lines.join('\n')}\n  }`, optional: required.size === 0 };
}

function resultType(schema: Schema): string {
  let type = 'unknown';
  for (const depth of RESULT_DEPTHS) {
    type = typeOf(schema, schema, 0, new Set(), depth);
    if (type.length <= MAX_RESULT_CHARS) return type;
  }
  return type.length <= MAX_RESULT_CHARS ? type : 'unknown';
}

/** One tool as a method of `tools` (kept per definition: a changed tool is a new definition). */
export function declarationOf(tool: RegisteredTool): string {
  let text = made.get(tool);
  if (text === undefined) {
    const parameters = parametersOf(tool.parameters);
    const result = tool.result === null ? 'unknown' : resultType(tool.result);
    text =
      `  /** ${note(tool.description, MAX_DESCRIPTION_CHARS)} */\n` +
      `  ${key(tool.name)}(args${parameters.optional ? '?' : ''}: ${parameters.text}): Promise<${result}>;`;
    made.set(tool, text);
  }
  return text;
}

/** What every answer of code_api starts with: how a call fails. */
export const DECLARATION_HEADER = `/** Thrown by a tool call that fails: code is the failure's code (policy_denied, invalid_arguments, upstream_rejected…). */
declare class ToolError extends Error { code: string; tool: string }
`;

/** The declarations of `tools` as a program sees them, with these tools as its methods. */
export function declarationsOf(tools: readonly RegisteredTool[]): string {
  return `${DECLARATION_HEADER}declare const tools: {\n${tools.map(declarationOf).join('\n')}\n};\n`;
}
