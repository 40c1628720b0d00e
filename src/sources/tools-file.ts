/**
 * TOOLS_FILE (docs/tool-sources.md): a YAML or JSON file of tool sources. Read once at start: parsed, every
 * `${VAR}` expanded, its sections checked for shape. Each section's entries then go to the
 * module of its kind (src/sources/<kind>), which checks its own fields.
 */
import { readFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isObject } from '../json.ts';
import { type JsonObject, type RawEntry } from './entry.ts';
import { expandVariables, variableFailure, type UsedVariable } from './variables.ts';
import { ToolsFileError } from '../errors.ts';

export const SECTIONS = ['plugins', 'http', 'openapi', 'mcp', 'credentials', 'policy', 'guardrails', 'toolsets'] as const;
export type SectionName = Exclude<(typeof SECTIONS)[number], 'credentials' | 'toolsets'>;

export interface ToolsFile {
  /** The file's absolute path, as every error message names it. */
  readonly path: string;
  /** Relative paths in the file (plugins, specs) resolve from here. */
  readonly folder: string;
  readonly plugins: readonly RawEntry[];
  readonly http: readonly RawEntry[];
  readonly openapi: readonly RawEntry[];
  readonly mcp: readonly RawEntry[];
  /** `credentials:` (docs/credentials.md): a mapping of names to definitions, read by src/sources/credentials.ts. */
  readonly credentials: JsonObject | null;
  /** Policy rules (docs/approvals.md), compiled by src/policy/ once every tool is registered. */
  readonly policy: readonly RawEntry[];
  /** Guardrail rules (docs/guardrails.md), compiled by src/guardrails/ once every plugin is loaded. */
  readonly guardrails: readonly RawEntry[];
  /** The `toolsets:` mapping as written (checked by src/toolsets once the catalog is loaded). */
  readonly toolsets: unknown;
  /** The `${VAR}`s the file used, but those that are a whole address (a url, a command): their values are redacted from results. */
  readonly variables: readonly UsedVariable[];
}

type Env = Readonly<Record<string, string | undefined>>;

function parseText(path: string, text: string): unknown {
  const fail = (reason: string): never => {
    throw new ToolsFileError(`TOOLS_FILE ${path}: not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${reason.split('\n')[0]}`);
  };
  try {
    // YAML 1.2 is a superset of JSON; a .json file is still read strictly as JSON.
    return extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text, { uniqueKeys: true, prettyErrors: false });
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
}

export async function readToolsFile(given: string, env: Env = process.env, cwd = process.cwd()): Promise<ToolsFile> {
  const path = resolve(cwd, given);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : err instanceof Error ? err.message : String(err);
    throw new ToolsFileError(`TOOLS_FILE ${path}: cannot be read: ${reason}`);
  }
  const parsed = parseText(path, text);
  if (!isObject(parsed)) {
    throw new ToolsFileError(`TOOLS_FILE ${path}: must be a mapping with any of the sections ${SECTIONS.join(', ')}`);
  }
  const unknown = Object.keys(parsed).filter((k) => !(SECTIONS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw new ToolsFileError(`TOOLS_FILE ${path}: unknown section "${unknown[0]}" (sections: ${SECTIONS.join(', ')})`);
  }
  const variables: UsedVariable[] = [];
  const expanded = expandVariables(parsed, env, variableFailure(path), '', variables) as Record<string, unknown>;
  const section = (name: SectionName): RawEntry[] => {
    const entries = expanded[name];
    if (entries === undefined || entries === null) return [];
    if (!Array.isArray(entries)) throw new ToolsFileError(`TOOLS_FILE ${path}: ${name} must be a list`);
    return entries.map((value, i) => ({ where: `${name}[${i}]`, value }));
  };
  const credentials = expanded.credentials ?? null;
  if (credentials !== null && !isObject(credentials)) throw new ToolsFileError(`TOOLS_FILE ${path}: credentials must be a mapping of names to definitions`);
  return Object.freeze({
    path,
    folder: dirname(path),
    plugins: section('plugins'),
    http: section('http'),
    openapi: section('openapi'),
    mcp: section('mcp'),
    credentials,
    policy: section('policy'),
    guardrails: section('guardrails'),
    toolsets: expanded.toolsets,
    variables,
  });
}
