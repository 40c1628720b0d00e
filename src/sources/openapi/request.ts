/**
 * An operation's request from validated arguments. Arguments never choose where the request
 * goes: every path parameter is percent-encoded as one segment (`/`, `?`, `#`, `%` included, and a
 * value of only dots, which a server would take as `.`/`..`), queries are encoded pair by pair.
 */
import { ToolFailure } from '../../tools/failure.ts';
import type { Operation, OperationParameter } from './operations.ts';

function scalar(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/** One path segment's worth of data, never a path: `../x` → `..%2Fx`, `..` → `%2E%2E`. */
export function encodePathValue(value: unknown): string {
  const text = Array.isArray(value) ? value.map(scalar).join(',') : scalar(value);
  if (/^\.+$/.test(text)) return text.replace(/\./g, '%2E');
  return encodeURIComponent(text);
}

function queryPairs(input: OperationParameter, value: unknown): [string, string][] {
  if (Array.isArray(value)) {
    return input.explode ? value.map((item) => [input.name, scalar(item)]) : [[input.name, value.map(scalar).join(',')]];
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (input.deepObject) return entries.map(([k, v]) => [`${input.name}[${k}]`, scalar(v)]);
    if (input.explode) return entries.map(([k, v]) => [k, scalar(v)]);
    return [[input.name, entries.flatMap(([k, v]) => [k, scalar(v)]).join(',')]];
  }
  return [[input.name, scalar(value)]];
}

const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export interface BuiltRequest {
  /** Path and query, encoded, after the base URL's own path. */
  path: string;
  headers: Record<string, string>;
  body: string | null;
}

export function buildRequest(toolName: string, operation: Operation, params: Record<string, unknown>): BuiltRequest {
  const values = new Map<string, unknown>();
  for (const input of operation.inputs) if (params[input.property] !== undefined) values.set(input.property, params[input.property]);
  const byName = new Map(operation.inputs.filter((i) => i.in === 'path').map((i) => [i.name, i]));
  const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const input = byName.get(name);
    return input === undefined ? '' : encodePathValue(values.get(input.property) ?? '');
  });
  const query: string[] = [];
  const headers: Record<string, string> = {};
  for (const input of operation.inputs) {
    const value = values.get(input.property);
    if (value === undefined) continue;
    if (input.in === 'query') {
      for (const [k, v] of queryPairs(input, value)) query.push(`${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
    } else if (input.in === 'header') {
      const text = Array.isArray(value) ? value.map(scalar).join(',') : scalar(value);
      if (!HEADER_VALUE.test(text)) {
        throw new ToolFailure('handler_error', `Tool "${toolName}": the header argument "${input.property}" cannot hold line breaks or control characters. Send it without them.`, `header ${input.name} holds control characters`);
      }
      headers[input.name.toLowerCase()] = text;
    }
  }
  const body = operation.bodyProperty !== null && params[operation.bodyProperty] !== undefined ? JSON.stringify(params[operation.bodyProperty]) : null;
  return { path: query.length === 0 ? path : `${path}?${query.join('&')}`, headers, body };
}
