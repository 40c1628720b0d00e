/**
 * The catalog: every tool checked once at start (name, description, schemas that compile,
 * examples that validate), compiled once, and identified by the hash of what the model sees.
 */
import { isObject } from '../json.ts';
import { badPatterns, closeObjects, createToolAjv, createUpstreamAjv, lazyValidator, upstreamCopy, violations, type Validator } from './schema.ts';
import { BatchMemo, canonicalDataJson, canonicalJson, hashJson, sha256Hex } from './hash.ts';
import { withSessionArgument } from './session-handle.ts';
import { checkToolApproval, type ToolApproval } from './approval.ts';
import type { IdempotencyConfig, JsonSchema, PluginRegistry, Resources, ToolAnnotations, ToolDefinition, ToolExample } from './types.ts';
import { SchemaCompileError, ToolDefinitionError } from '../errors.ts';
import { checkAnnotations, checkIdempotency, fail, type NormalizedIdempotency } from './definition-checks.ts';
import { EntryCatalog } from './entries.ts';
import type { EntryDefinition } from './entry-definitions.ts';
import { entryOf } from './entry-of.ts';
import type { GuardrailDefinition } from './guardrail.ts';
import { sameSource, type ToolSource } from './source.ts';

export type { NormalizedIdempotency } from './definition-checks.ts';

export const TOOL_NAME = /^[a-z0-9_-]{1,64}$/;

/**
 * How a tool's schemas are compiled. `strict` (plugins, built-ins, HTTP entries): strict AJV, at
 * registration. `upstream` (OpenAPI documents, MCP servers, written by others): lenient AJV, on
 * first use, after a quick check of the schema at registration.
 */
export interface RegisterOptions {
  schemas?: 'strict' | 'upstream';
  /** What tool search reads besides the definition: the source's name and its own words for the tool (an operation's tags and summary). */
  hints?: SearchHints;
  /** A built-in whose description carries its rules (code_run's): longer than the 200 characters of any other. */
  longDescription?: boolean;
}

export interface SearchHints {
  words: readonly string[];
}

/** The registry as one source sees it: everything registered through it is that source's. */
export interface SourceRegistry extends PluginRegistry {
  readonly source: ToolSource;
  registerTool(definition: ToolDefinition, options?: RegisterOptions): void;
  /** A built-in that keeps its state in a session (docs/sessions-and-planning.md): it gets the optional `session_id` argument. Not offered to plugins. */
  registerSessionTool(definition: ToolDefinition): void;
}

export interface RegisteredTool {
  readonly name: string;
  readonly description: string;
  /** The schema as served and enforced (undeclared properties refused unless it says otherwise). */
  readonly parameters: JsonSchema;
  readonly result: JsonSchema | null;
  readonly examples: readonly ToolExample[];
  readonly idempotency: NormalizedIdempotency | null;
  readonly keyFunction: IdempotencyConfig['key'] | null;
  readonly annotations: ToolAnnotations | null;
  readonly timeoutMs: number | null;
  /** A handler that goes this long without `context.beat()` is aborted as stuck; null: never. */
  readonly heartbeatMs: number | null;
  /** The definition's `approval:` (docs/approvals.md): every call waits for a person; null: none. */
  readonly approval: ToolApproval | null;
  /** The tool's own content cut-off; null: MAX_CONTENT_CHARS. */
  readonly maxContentChars: number | null;
  /** A session built-in: takes the optional `session_id` argument and always runs in a session (src/tools/session-handle.ts). */
  readonly takesSessionHandle: boolean;
  /** The credentials (TOOLS_FILE `credentials:`) a call needs from its user before it runs; empty: none. */
  readonly credentials: readonly string[];
  /** MCP's `_meta` of the tool (an MCP App's `ui.resourceUri`); null: none. */
  readonly meta: Readonly<Record<string, unknown>> | null;
  readonly hash: string;
  readonly source: ToolSource;
  readonly hints: SearchHints | null;
  readonly validateParams: Validator;
  readonly validateResult: Validator | null;
  readonly handler: ToolDefinition['handler'];
}

/** The definition hash (docs/formats.md, "Tool provenance"), from the canonical JSON of its parts (each also keys the validator cache). */
function definitionHash(name: string, description: string, parametersJson: string, resultJson: string | null): string {
  const result = resultJson === null ? '' : `,"result":${resultJson}`;
  return sha256Hex(`{"description":${canonicalJson(description)},"name":${canonicalJson(name)},"parameters":${parametersJson}${result}}`);
}

export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();
  /** The other kinds: resources, resource templates and prompts (src/tools/entries.ts). */
  readonly entries = new EntryCatalog();
  readonly #resources = new Map<string, unknown>();
  readonly #guardrails = new Map<string, GuardrailDefinition>();
  readonly #ajv = createToolAjv();
  #upstreamAjv: ReturnType<typeof createUpstreamAjv> | null = null;
  /** Compiled validators by mode and schema hash: equal schemas (the same one in many operations) compile once. */
  readonly #validators = new Map<string, Validator>();
  /** Canonical JSON of upstream schema objects while a batch registers (never changed once converted; many are shared). */
  readonly #canonical = new BatchMemo();
  /** MAX_CONTENT_CHARS: a tool's own max_content_chars must be below it. */
  readonly #maxContentChars: number;

  constructor(options: { maxContentChars?: number } = {}) {
    this.#maxContentChars = options.maxContentChars ?? 100_000;
  }
  #version = 0;

  readonly resources: Resources = Object.freeze({
    get: <T>(key: string): T | undefined => this.#resources.get(key) as T | undefined,
  });

  /** What `source` registers through: its tools, resources, entries and guardrails are named as its own. */
  of(source: ToolSource): SourceRegistry {
    return Object.freeze({
      source,
      registerTool: (definition: ToolDefinition, options: RegisterOptions = {}) => this.#add(this.#check(definition, source, false, undefined, options)),
      registerSessionTool: (definition: ToolDefinition) => this.#add(this.#check(withSessionArgument(definition), source, true)),
      registerResource: (key: string, value: unknown) => this.#registerResource(source, key, value),
      registerEntry: (definition: EntryDefinition) => {
        const problem = this.entries.add(entryOf(definition, source));
        if (problem !== null) throw new ToolDefinitionError(`${source.label}: ${problem}`);
      },
      registerGuardrail: (definition: GuardrailDefinition) => this.#registerGuardrail(source, definition),
    });
  }

  #add(tool: RegisteredTool): void {
    this.#tools.set(tool.name, Object.freeze(tool));
    this.#version++;
  }

  #registerResource({ label }: ToolSource, key: string, value: unknown): void {
    if (typeof key !== 'string' || key === '') throw new ToolDefinitionError(`${label}: a resource needs a non-empty string key`);
    if (this.#resources.has(key)) throw new ToolDefinitionError(`${label}: resource "${key}" is registered twice`);
    this.#resources.set(key, value);
  }

  /** A plugin's own guardrail (src/tools/guardrail.ts); the guardrail stage runs it on the tools it names. */
  #registerGuardrail({ label }: ToolSource, definition: GuardrailDefinition): void {
    const name = (definition as { name?: unknown }).name;
    if (typeof name !== 'string' || name === '') throw new ToolDefinitionError(`${label}: a guardrail needs a non-empty name`);
    if (this.#guardrails.has(name)) throw new ToolDefinitionError(`${label}: guardrail "${name}" is registered twice`);
    if (definition.input === undefined && definition.output === undefined)
      throw new ToolDefinitionError(`${label}: guardrail "${name}" needs an input or an output check`);
    this.#guardrails.set(name, definition);
  }

  /** The plugins' guardrails, in the order they were registered. */
  guardrails(): GuardrailDefinition[] {
    return [...this.#guardrails.values()];
  }

  /**
   * Swaps every tool of `source` for `definitions` in one step (a tool source whose upstream
   * changed its list at run time). All are checked first: a bad one or a name another source
   * holds throws, changing nothing. Answers the tools now registered for the source.
   */
  replaceSource(source: ToolSource, definitions: readonly ToolDefinition[], options: RegisterOptions = {}): RegisteredTool[] {
    const ours = (name: string) => this.#owns(source, name);
    const checked = definitions.map((definition) => Object.freeze(this.#check(definition, source, false, ours, options)));
    const names = new Set<string>();
    for (const tool of checked) {
      if (names.has(tool.name)) fail(source.label, tool.name, 'name is produced twice');
      names.add(tool.name);
    }
    for (const [name, tool] of this.#tools) if (sameSource(tool.source, source)) this.#tools.delete(name);
    for (const tool of checked) this.#tools.set(tool.name, tool);
    this.#version++;
    return checked;
  }

  /** Checks a definition as `source` would register it (its own tools' names are free), without registering it. */
  check(definition: ToolDefinition, source: ToolSource, options: RegisterOptions = {}): RegisteredTool {
    return this.#check(definition, source, false, (name) => this.#owns(source, name), options);
  }

  #owns(source: ToolSource, name: string): boolean {
    const held = this.#tools.get(name);
    return held !== undefined && sameSource(held.source, source);
  }

  /** Counts changes to the catalog: what is built from list() is stale once it moves. */
  get version(): number {
    return this.#version;
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  list(): RegisteredTool[] {
    return [...this.#tools.values()];
  }

  #compile(source: string, name: string, what: string, schema: JsonSchema, schemaJson: string, upstream: boolean): Validator {
    const key = `${upstream ? 'upstream' : 'strict'}:${sha256Hex(schemaJson)}`;
    const cached = this.#validators.get(key);
    if (cached !== undefined) return cached;
    let validator: Validator;
    if (upstream) {
      // Compiling GitHub's 1,223 operations would take minutes: each schema is compiled on its
      // tool's first call instead. Parameters are checked now (the meta-schema, the patterns), so
      // a tool that could never take a call is left out at start; a result schema that turns out
      // not to compile checks nothing.
      const ajv = (this.#upstreamAjv ??= createUpstreamAjv());
      if (what === 'parameters') {
        const patterns = badPatterns(schema);
        if (patterns.length > 0)
          fail(
            source,
            name,
            `${what} schema does not compile: pattern ${JSON.stringify(patterns[0]).slice(0, 120)} is not a regular expression`,
            SchemaCompileError,
          );
        if (!ajv.validateSchema(schema)) fail(source, name, `${what} schema does not compile: ${ajv.errorsText(ajv.errors).slice(0, 300)}`, SchemaCompileError);
      }
      validator = lazyValidator(() => ajv.compile(upstreamCopy(schema) as JsonSchema), what === 'result');
    } else {
      try {
        validator = this.#ajv.compile(schema);
      } catch (err) {
        return fail(source, name, `${what} schema does not compile: ${err instanceof Error ? err.message : String(err)}`, SchemaCompileError);
      }
    }
    this.#validators.set(key, validator);
    return validator;
  }

  /** `replaceable`: names this registration may take over (the tools it replaces). */
  #check(
    definition: unknown,
    origin: ToolSource,
    takesSessionHandle: boolean,
    replaceable: (name: string) => boolean = () => false,
    options: RegisterOptions = {},
  ): RegisteredTool {
    const source = origin.label;
    const upstream = options.schemas === 'upstream';
    if (!isObject(definition)) fail(source, undefined, 'a definition must be an object');
    const {
      name,
      description,
      parameters,
      result,
      examples,
      idempotency,
      on_lost,
      annotations,
      timeout_ms,
      heartbeat_ms,
      max_content_chars,
      credentials,
      approval,
      handler,
    } = definition;
    if (typeof name !== 'string' || !TOOL_NAME.test(name)) fail(source, name, `name must match ${TOOL_NAME}`);
    if (this.#tools.has(name) && !replaceable(name)) fail(source, name, `name is already taken by ${this.#tools.get(name)!.source.label}`);
    const longest = options.longDescription === true ? 2000 : 200;
    if (typeof description !== 'string' || description.length < 1 || description.length > longest) {
      fail(source, name, `description must be 1–${longest} characters`);
    }
    if (typeof handler !== 'function') fail(source, name, 'handler must be a function');
    if (!isObject(parameters) || parameters.type !== 'object') fail(source, name, 'parameters must be a JSON Schema with type "object"');
    if (result !== undefined && !isObject(result)) fail(source, name, 'result must be a JSON Schema object');
    if (timeout_ms !== undefined && !(Number.isInteger(timeout_ms) && (timeout_ms as number) >= 1)) {
      fail(source, name, 'timeout_ms must be a positive whole number of milliseconds');
    }
    if (heartbeat_ms !== undefined && !(Number.isInteger(heartbeat_ms) && (heartbeat_ms as number) >= 1)) {
      fail(source, name, 'heartbeat_ms must be a positive whole number of milliseconds');
    }
    if (
      max_content_chars !== undefined &&
      !(Number.isInteger(max_content_chars) && (max_content_chars as number) >= 1 && (max_content_chars as number) < this.#maxContentChars)
    ) {
      fail(source, name, `max_content_chars must be a whole number from 1 to ${this.#maxContentChars - 1} (below MAX_CONTENT_CHARS)`);
    }
    if (credentials !== undefined && !(Array.isArray(credentials) && credentials.every((c) => typeof c === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(c)))) {
      fail(source, name, 'credentials must be a list of credential names');
    }
    const served = closeObjects(parameters);
    const canonical = (schema: unknown) => (upstream ? canonicalDataJson(schema, this.#canonical.get()) : canonicalJson(schema));
    const parametersJson = canonical(served);
    const resultJson = result === undefined ? null : canonical(result);
    const validateParams = this.#compile(source, name, 'parameters', served, parametersJson, upstream);
    const validateResult = result === undefined ? null : this.#compile(source, name, 'result', result, resultJson!, upstream);
    const checkedExamples = this.#checkExamples(source, name, examples, validateParams, validateResult);
    const checkedAnnotations = checkAnnotations(source, name, annotations);
    const { normalized, keyFunction } = checkIdempotency(source, name, idempotency, served, on_lost, checkedAnnotations);
    return {
      name,
      description,
      parameters: served,
      result: result ?? null,
      examples: checkedExamples,
      idempotency: normalized,
      keyFunction,
      annotations: checkedAnnotations,
      timeoutMs: (timeout_ms as number | undefined) ?? null,
      heartbeatMs: (heartbeat_ms as number | undefined) ?? null,
      approval: checkToolApproval(approval, (problem) => fail(source, name, problem)),
      maxContentChars: (max_content_chars as number | undefined) ?? null,
      takesSessionHandle,
      credentials: Object.freeze([...((credentials as string[] | undefined) ?? [])]),
      meta: isObject(definition._meta) ? definition._meta : null,
      hash: definitionHash(name, description, parametersJson, resultJson),
      source: origin,
      hints: options.hints ?? null,
      validateParams,
      validateResult,
      handler: handler as ToolDefinition['handler'],
    };
  }

  #checkExamples(source: string, name: string, examples: unknown, validateParams: Validator, validateResult: Validator | null): ToolExample[] {
    if (examples === undefined) return [];
    if (!Array.isArray(examples)) fail(source, name, 'examples must be an array');
    return examples.map((example: unknown, i) => {
      if (!isObject(example)) fail(source, name, `examples[${i}] must be an object`);
      const { description, input, output } = example;
      if (typeof description !== 'string' || description.length > 200) {
        fail(source, name, `examples[${i}].description must be a string of at most 200 characters`);
      }
      if (!validateParams(input)) {
        fail(source, name, `examples[${i}].input does not match parameters: ${violations(validateParams.errors).join('; ')}`);
      }
      if (validateResult !== null && !validateResult(output)) {
        fail(source, name, `examples[${i}].output does not match result: ${violations(validateResult.errors).join('; ')}`);
      }
      return { description, input: input as Record<string, unknown>, output };
    });
  }
}

/** The catalog hash a caller sees: over the hashes of exactly the tools it may call. */
export function catalogHash(tools: readonly RegisteredTool[]): string {
  return hashJson(tools.map((t) => t.hash).sort());
}
