/** The public shapes of a tool: what a plugin defines and what a handler sees and returns. */
import type { UserIdentity } from '../callers/keys.ts';
import type { Attachment } from '../schemas.ts';
import type { EntryDefinition } from './entry-definitions.ts';
import type { ElicitRequest, ElicitResult, SampleRequest, SampleResult, ToolLog } from './client-types.ts';
import type { GuardrailDefinition } from './guardrail.ts';

export type { UserIdentity };

export type JsonSchema = Record<string, unknown>;

/** An MCP content block other than text (an image, audio, a resource or a link to one): `type` names it. */
export type { Attachment };

/** What a handler returns (docs/plugins.md). */
export interface ToolResult<V = unknown> {
  message: string;
  value: V | null;
  success: boolean;
  exclude_value_from_context: boolean;
  /**
   * Content the message cannot hold (MCP image, audio, resource blocks): passed through unchanged
   * over MCP, named in `content` for the other formats. Optional; not kept by the effect ledger.
   */
  attachments?: Attachment[];
}

export interface IdempotencyConfig {
  strategy: 'auto' | 'params' | 'custom' | 'none';
  /** Required with strategy `params`: the declared parameters that identify the call. */
  param_keys?: string[];
  key?: (params: Record<string, unknown>, context: ToolContext) => string;
  ttl_s?: number | null;
  /** `key` and `user` both partition by the caller: an API key, or a verified user (`user:<sub>`). */
  scope?: 'session' | 'global' | 'key' | 'user';
}

export interface ToolAnnotations {
  read_only?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  open_world?: boolean;
}

export interface ToolExample {
  description: string;
  input: Record<string, unknown>;
  output: unknown;
}

/** The handler's view of the session named by X-Session-Id; writes are staged until the handler succeeds. */
export interface SessionHandle {
  readonly id: string;
  get<T = unknown>(key: string): Promise<T | undefined>;
  /** Several keys read at one instant, in one round trip. */
  getMany<T = unknown>(keys: readonly string[]): Promise<(T | undefined)[]>;
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
}

export interface Resources {
  get<T = unknown>(key: string): T | undefined;
}

/** A handler's view of the calling user's credentials. */
export interface Credentials {
  /**
   * The user's access token (oauth2) or value (secret) of a credential declared in TOOLS_FILE,
   * refreshed when it is about to expire. When the user has none, the call ends with
   * `authorization_required` and a link where the person connects it.
   */
  get(name: string): Promise<string>;
}

/** The outcome of a nested `context.invoke`. */
export interface NestedResult {
  success: boolean;
  message: string;
  value: unknown;
  error: { code: string; detail: string } | null;
}

/** Frozen, made for one invocation (docs/plugins.md). */
export interface ToolContext {
  readonly callId: string;
  readonly toolName: string;
  /** The HTTP request's id (X-Request-Id, or one made up): the one every log line of the call carries. */
  readonly requestId: string;
  /**
   * The effect ledger's key for this call when the tool has an idempotency strategy (the key every
   * retry of this call shares), else null. Forwarding tools send it upstream as `Idempotency-Key`.
   */
  readonly idempotencyKey: string | null;
  readonly session: SessionHandle | null;
  readonly deadline: number;
  readonly signal: AbortSignal;
  /** pino's logger; also callable, `log(level, message, data?)`, which reaches an MCP client as `notifications/message`. */
  readonly log: ToolLog;
  readonly resources: Resources;
  readonly caller: string | null;
  /** The verified user the call is made for (`{id: sub, groups, claims}`); null for an API key or an open service. */
  readonly user: UserIdentity | null;
  /** The calling user's credentials (docs/credentials.md). */
  readonly credentials: Credentials;
  beat(): void;
  progress(done: number, total?: number): void;
  invoke(name: string, params: Record<string, unknown>): Promise<NestedResult>;
  /** Asks the person at the caller's MCP client: a form (`schema`) or a URL (docs/plugins.md). */
  elicit(request: ElicitRequest): Promise<ElicitResult>;
  /** Asks the caller's MCP client for a model completion (`sampling/createMessage`). */
  sample(request: SampleRequest): Promise<SampleResult>;
}

/** Where a plugin tool's handler runs (ToolDefinition.isolation). */
export type Isolation = 'none' | 'worker';

/** A handler may return a full ToolResult or one without the defaulted fields. */
export type HandlerReturn<V = unknown> = Pick<ToolResult<V>, 'message'> & Partial<ToolResult<V>>;

/** A tool as a plugin defines it: a plain object, no import from the project needed. */
export interface ToolDefinition<P = Record<string, unknown>, V = unknown> {
  name: string;
  description: string;
  parameters: JsonSchema;
  result?: JsonSchema;
  examples?: ToolExample[];
  idempotency?: IdempotencyConfig;
  /**
   * After a run's lease lapsed without a record (its process died): `rerun` the next identical call,
   * or answer `outcome_unknown` until an admin resolves it (docs/ledger.md). Default: `rerun` when
   * annotated idempotent, else `unknown`.
   */
  on_lost?: 'rerun' | 'unknown';
  annotations?: ToolAnnotations;
  timeout_ms?: number;
  /** A handler that goes this long without calling `context.beat()` is aborted as stuck (`deadline_exceeded`). */
  heartbeat_ms?: number;
  /** This tool's own `content` cut-off, below MAX_CONTENT_CHARS (docs/large-results.md). */
  max_content_chars?: number;
  /**
   * Credentials (TOOLS_FILE `credentials:`) the caller must have before a call runs; a missing one
   * answers `authorization_required` with a link to connect it (docs/credentials.md).
   */
  credentials?: string[];
  /**
   * Where the handler runs: `worker` runs it in a worker thread of the pool, so a loop, a crash or
   * a leak of its own ends only its call (docs/plugins.md, "Isolated handlers"); `none`, in process.
   * Default: the plugin's setting, else TOOL_ISOLATION.
   */
  isolation?: Isolation;
  /** Every call waits for a person's approval (docs/approvals.md): who may decide and for how long. */
  approval?: { approvers?: string[]; ttl_s?: number };
  /** MCP's `_meta` of the tool, served as is in tools/list (an MCP App's `ui.resourceUri`). */
  _meta?: Record<string, unknown>;
  /** Method syntax on purpose: a definition typed for its own params is still a ToolDefinition. */
  handler(params: P, context: ToolContext): HandlerReturn<V> | Promise<HandlerReturn<V>>;
}

/** What a plugin module's default export may be (docs/plugins.md). */
export interface PluginRegistry {
  registerTool(definition: ToolDefinition): void;
  registerResource(key: string, value: unknown): void;
  /** An MCP resource, resource template or prompt (defineResource, defineResourceTemplate, definePrompt). */
  registerEntry(definition: EntryDefinition): void;
  registerGuardrail(definition: GuardrailDefinition): void;
}

export type PluginExport =
  | ToolDefinition
  | GuardrailDefinition
  | EntryDefinition
  | (ToolDefinition | GuardrailDefinition | EntryDefinition)[]
  | ((registry: PluginRegistry) => void | Promise<void>);
