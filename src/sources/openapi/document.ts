/**
 * Reading an OpenAPI document (a file or an http(s) URL). A document whose `$ref`s are all local
 * (`#/…`, as published API descriptions are) is only parsed: its refs are followed while its
 * operations are described, each target once. One that refers to other files or URLs is
 * dereferenced whole by swagger-parser (seconds for a document the size of GitHub's).
 */
import { readFile } from 'node:fs/promises';
import { extname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { EntryReader } from '../entry.ts';

export interface LoadedDocument {
  document: Record<string, unknown>;
  /** Where the document came from: a URL, or the absolute path of the file. */
  location: string;
}

const DOCUMENT_TIMEOUT_MS = 10_000;

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
}

async function parseFile(path: string): Promise<Record<string, unknown>> {
  const text = await readFile(path, 'utf8');
  const parsed: unknown = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text, { maxAliasCount: -1 });
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the document is not an object');
  return parsed as Record<string, unknown>;
}

/** Whether any `$ref` points outside the document. */
function hasOutsideRefs(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) return node.some(hasOutsideRefs);
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' ? typeof value === 'string' && !value.startsWith('#') : hasOutsideRefs(value)) return true;
  }
  return false;
}

export async function loadDocument(reader: EntryReader, spec: string, folder: string): Promise<LoadedDocument> {
  const isUrl = /^https?:\/\//i.test(spec);
  const location = isUrl || isAbsolute(spec) ? spec : resolve(folder, spec);
  let document: Record<string, unknown>;
  // The document is the operator's choice, so an internal URL (a service beside toolport) is
  // allowed: the parser's SSRF guard is for documents from strangers.
  const resolveOptions = { http: { safeUrlResolver: false, timeout: DOCUMENT_TIMEOUT_MS, redirects: 0 } };
  try {
    // swagger-parser is loaded only when needed: a URL, or refs to other files.
    const parser = async () => (await import('@apidevtools/swagger-parser')).default;
    document = isUrl ? ((await (await parser()).parse(location, { resolve: resolveOptions })) as unknown as Record<string, unknown>) : await parseFile(location);
    // Recursive schemas keep their `$ref` (expanding them would never end); the schema conversion
    // accepts any value there.
    if (hasOutsideRefs(document)) {
      document = (await (await parser()).dereference(location, { dereference: { circular: 'ignore' }, resolve: resolveOptions })) as unknown as Record<string, unknown>;
    }
  } catch (err) {
    return reader.fail(`spec ${spec} could not be read as OpenAPI: ${firstLine(err)}`);
  }
  const version = typeof document.openapi === 'string' ? document.openapi : typeof document.swagger === 'string' ? `Swagger ${document.swagger}` : 'no version';
  if (!/^3\.[01]\./.test(version)) reader.fail(`spec ${spec} is ${version.startsWith('Swagger') ? version : `OpenAPI ${version}`}: only OpenAPI 3.0 and 3.1 are read`);
  return { document, location };
}

/**
 * The base URL: the entry's `base_url`, else the document's first server (its variables at their
 * defaults; a relative one resolved against the document's URL).
 */
export function baseUrlOf(reader: EntryReader, loaded: LoadedDocument, given: string | undefined): string {
  if (given !== undefined) return given;
  const servers = loaded.document.servers;
  const server = Array.isArray(servers) ? (servers[0] as { url?: unknown; variables?: Record<string, { default?: unknown }> } | undefined) : undefined;
  if (typeof server?.url !== 'string') return reader.fail('base_url is needed: the document names no server');
  const url = server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => String(server.variables?.[name]?.default ?? whole));
  if (/^https?:\/\//i.test(loaded.location)) {
    // swagger-parser already made a relative server absolute, but from the document URL's host
    // without its port: put the port back.
    const spec = new URL(loaded.location);
    const portless = `${spec.protocol}//${spec.hostname}/`;
    if (spec.port !== '' && url.startsWith(portless)) return `${spec.origin}${url.slice(portless.length - 1)}`;
  }
  if (/^https?:\/\//i.test(url)) return url;
  if (/^https?:\/\//i.test(loaded.location)) return new URL(url, loaded.location).href;
  return reader.fail(`base_url is needed: the document's server URL "${url}" is relative to where it is served`);
}
