/**
 * Toolsets (docs/toolsets.md): named subsets of the catalog from the tools file's `toolsets:` section,
 * `{name: {tools: [glob…], description?, discovery?: search, code_mode?: true, always?: [glob…]}}`. Membership is
 * computed from the catalog once per catalog version, so asking whether a tool is in a toolset
 * costs one set lookup whatever the catalog's size.
 */
import picomatch from 'picomatch';
import type { Logger } from 'pino';
import { isObject } from '../json.ts';
import { catalogHash, TOOL_NAME, type RegisteredTool, type ToolRegistry } from '../tools/registry.ts';

/** The built-ins a `discovery: search` toolset lists in place of its members. */
export const SEARCH_TOOLS: readonly string[] = ['tool_search', 'tool_invoke'];
/** The built-ins a `code_mode: true` toolset lists in place of its members (docs/code-mode.md). */
export const CODE_TOOLS: readonly string[] = ['code_api', 'code_run'];

export interface ToolsetDefinition {
  readonly name: string;
  readonly description: string | null;
  readonly tools: readonly string[];
  readonly discovery: 'search' | null;
  /** Its members are called from programs: code_api and code_run are listed in their place. */
  readonly codeMode: boolean;
  readonly always: readonly string[];
}

/** One toolset as one request sees it. */
export interface ToolsetView {
  readonly definition: ToolsetDefinition;
  /** `discovery: search` for this view (the toolset's own, or `/mcp/{toolset}?discovery=search`). */
  readonly search: boolean;
  /** Whether a call to the tool is inside the toolset (members, and the search built-ins when searching). */
  allows(tool: string): boolean;
  /** Whether the tool is listed: members; with search, only the search built-ins and the `always` tools. */
  listed(tool: string): boolean;
}

interface Membership {
  members: Set<string>;
  always: Set<string>;
}

const KEYS = ['tools', 'description', 'discovery', 'code_mode', 'always'];

type Fail = (message: string) => never;

function globList(fail: Fail, name: string, key: string, value: unknown, required: boolean): string[] {
  if (value === undefined && !required) return [];
  if (!Array.isArray(value) || value.length === 0 || !value.every((g) => typeof g === 'string' && g !== '')) {
    fail(`toolsets.${name}.${key} must be a non-empty list of tool name globs`);
  }
  return value as string[];
}

/** The `toolsets:` section, checked for shape; `fail` stops the start naming the file. */
export function readToolsets(section: unknown, fail: Fail): ToolsetDefinition[] {
  if (section === undefined || section === null) return [];
  if (!isObject(section)) fail(`toolsets must be a mapping of toolset names to {tools, description?, discovery?, always?}`);
  return Object.entries(section).map(([name, raw]) => {
    if (!TOOL_NAME.test(name)) fail(`toolset name "${name.slice(0, 80)}" must match ${TOOL_NAME}`);
    if (!isObject(raw)) fail(`toolsets.${name} must be a mapping with tools`);
    const unknown = Object.keys(raw).find((k) => !KEYS.includes(k));
    if (unknown !== undefined) fail(`toolsets.${name}: unknown key "${unknown}" (keys: ${KEYS.join(', ')})`);
    const { description, discovery } = raw;
    if (description !== undefined && (typeof description !== 'string' || description.length < 1 || description.length > 200)) {
      fail(`toolsets.${name}.description must be 1–200 characters`);
    }
    if (discovery !== undefined && discovery !== 'search') fail(`toolsets.${name}.discovery must be "search" (or left out)`);
    if (raw.code_mode !== undefined && typeof raw.code_mode !== 'boolean') fail(`toolsets.${name}.code_mode must be true or false`);
    return Object.freeze({
      name,
      description: (description as string | undefined) ?? null,
      tools: globList(fail, name, 'tools', raw.tools, true),
      discovery: discovery === 'search' ? ('search' as const) : null,
      codeMode: raw.code_mode === true,
      always: globList(fail, name, 'always', raw.always, false),
    });
  });
}

export class Toolsets {
  readonly #definitions: Map<string, ToolsetDefinition>;
  readonly #registry: ToolRegistry;
  #membership = new Map<string, Membership>();
  #version = -1;

  constructor(definitions: readonly ToolsetDefinition[], registry: ToolRegistry) {
    this.#definitions = new Map(definitions.map((d) => [d.name, d]));
    this.#registry = registry;
  }

  get size(): number {
    return this.#definitions.size;
  }

  definitions(): ToolsetDefinition[] {
    return [...this.#definitions.values()];
  }

  get(name: string): ToolsetDefinition | undefined {
    return this.#definitions.get(name);
  }

  /** One line per toolset glob that matches no tool of the catalog (logged at start). */
  warnUnmatched(log: Logger): void {
    const names = this.#registry.list().map((t) => t.name);
    for (const definition of this.#definitions.values()) {
      for (const [key, globs] of [
        ['tools', definition.tools],
        ['always', definition.always],
      ] as const) {
        for (const glob of globs) {
          const matches = picomatch(glob);
          if (!names.some((n) => matches(n)))
            log.warn({ toolset: definition.name, glob }, `toolset "${definition.name}": ${key} glob "${glob}" matches no tool`);
        }
      }
    }
  }

  /** Whether `tool` is a member of the toolset (its `tools` or `always` globs). */
  isMember(toolset: string, tool: string): boolean {
    const membership = this.#of(toolset);
    return membership !== undefined && (membership.members.has(tool) || membership.always.has(tool));
  }

  /** The toolset's members the caller may call, in catalog order. */
  members(toolset: string, allows: ((tool: string) => boolean) | undefined): RegisteredTool[] {
    return this.#registry.list().filter((t) => this.isMember(toolset, t.name) && (allows === undefined || allows(t.name)));
  }

  /** The hash of its tools' hashes (the caller's view of it): the same definitions, the same hash, on every replica. */
  hash(toolset: string, allows: ((tool: string) => boolean) | undefined): string {
    return catalogHash(this.members(toolset, allows));
  }

  view(name: string, forceSearch = false): ToolsetView | undefined {
    const definition = this.#definitions.get(name);
    if (definition === undefined) return undefined;
    const search = forceSearch || definition.discovery === 'search';
    const code = definition.codeMode;
    const builtin = (tool: string) => (search && SEARCH_TOOLS.includes(tool)) || (code && CODE_TOOLS.includes(tool));
    return {
      definition,
      search,
      allows: (tool) => this.isMember(name, tool) || builtin(tool),
      listed: (tool) => (search || code ? builtin(tool) || this.#of(name)!.always.has(tool) : this.isMember(name, tool)),
    };
  }

  #of(toolset: string): Membership | undefined {
    if (this.#version !== this.#registry.version) {
      this.#membership = new Map();
      this.#version = this.#registry.version;
    }
    let membership = this.#membership.get(toolset);
    if (membership === undefined) {
      const definition = this.#definitions.get(toolset);
      if (definition === undefined) return undefined;
      const select = (globs: readonly string[]) => {
        const matchers = globs.map((g) => picomatch(g));
        return new Set(
          this.#registry
            .list()
            .filter((t) => matchers.some((m) => m(t.name)))
            .map((t) => t.name),
        );
      };
      membership = { members: select(definition.tools), always: select(definition.always) };
      this.#membership.set(toolset, membership);
    }
    return membership;
  }
}
