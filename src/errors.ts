/**
 * Every error of the service, as one set of codes made with @fastify/error, and their RFC 9457
 * problem+json form. Three kinds:
 * - request errors (4xx, and the 503s of an outage or a shutdown) are answered as problem+json;
 * - errors a tool source or a handler raises are answered as tool-level failures by the call
 *   pipeline (`ToolFailure` in src/tools/failure.ts carries the tool-level code);
 * - errors that stop the start (configuration, tools file, plugins, tool definitions) are printed.
 * Anything else — a bug — answers 500 without a stack trace or an internal message.
 */
import createError, { type FastifyErrorConstructor } from '@fastify/error';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
const TYPE_BASE = 'urn:toolport:problem:';

// Request errors: answered as problem+json with their status.
export const InvalidBody = createError('TP_INVALID_BODY', '%s', 400);
export const NoToolCall = createError('TP_NO_TOOL_CALL', '%s', 400);
export const InvalidHeader = createError('TP_INVALID_HEADER', '%s', 400);
export const InvalidQuery = createError('TP_INVALID_QUERY', '%s', 400);
export const NotFound = createError('TP_NOT_FOUND', '%s', 404);
export const MethodNotAllowed = createError('TP_METHOD_NOT_ALLOWED', '%s', 405);
/** The store did not answer (or is known to be down): 503, logged once per outage by the store. */
export const StoreUnavailable = createError('TP_STORE_UNAVAILABLE', '%s', 503);
/** A write a guarantee rests on was not acknowledged by enough replicas in time: 503, nothing ran. */
export const StoreNotDurable = createError('TP_STORE_NOT_DURABLE', '%s', 503, StoreUnavailable as unknown as ErrorConstructor);
export const Unauthorized = createError('TP_UNAUTHORIZED', '%s', 401);
export const Forbidden = createError('TP_FORBIDDEN', '%s', 403);
/** A Host this service does not answer (a DNS rebinding page, a wrong name): see ALLOWED_HOSTS. */
export const HostNotAllowed = createError('TP_HOST_NOT_ALLOWED', '%s', 403);
/** A browser page of another origin calling /mcp or a route that changes state: see CORS_ORIGINS. */
export const OriginNotAllowed = createError('TP_ORIGIN_NOT_ALLOWED', '%s', 403);
const InsufficientScopeBase = createError<[string]>('TP_INSUFFICIENT_SCOPE', '%s', 403);
/** A user's token lacks a scope an access rule needs (docs/identity.md): the problem names it. */
export class InsufficientScope extends InsufficientScopeBase {
  readonly scope: string;
  constructor(message: string, scope: string) {
    super(message);
    this.scope = scope;
  }
}
export const RateLimited = createError('TP_RATE_LIMITED', '%s', 429);
export const Closing = createError('TP_CLOSING', '%s', 503);
export const NotReady = createError('TP_NOT_READY', '%s', 503);
/** The event loop lags past MAX_EVENT_LOOP_DELAY_MS: new calls are refused until it turns again. */
export const Overloaded = createError('TP_OVERLOADED', '%s', 503);
const IdempotencyKeyInFlightBase = createError<[string]>('TP_IDEMPOTENCY_KEY_IN_FLIGHT', '%s', 409);
/** 409: a call holding the same Idempotency-Key is still running; the answer says when to retry. */
export class IdempotencyKeyInFlight extends IdempotencyKeyInFlightBase {
  readonly retryAfterS: number;
  constructor(retryAfterS: number) {
    super('a call with this Idempotency-Key is still running; retry after it finishes');
    this.retryAfterS = retryAfterS;
  }
}
const IdempotencyKeyReusedBase = createError<[string]>('TP_IDEMPOTENCY_KEY_REUSED', '%s', 422);
/** 422: the Idempotency-Key was first used with other arguments. */
export class IdempotencyKeyReused extends IdempotencyKeyReusedBase {
  constructor() {
    super('this Idempotency-Key was used with other arguments; use a new key for a new payload');
  }
}
export const AlreadyDecided = createError('TP_ALREADY_DECIDED', '%s', 409);
export const InvalidArguments = createError('TP_INVALID_ARGUMENTS', '%s', 422);

// Raised below the edge, which answers them in its own form (each names how); one that escapes is a 500.
/** JSON text refused by src/json.ts (too deep, an unsafe integer, a poisoned key): a 400, or invalid_arguments. */
export const JsonInputError = createError('TP_INVALID_JSON', '%s', 500);
/** A bearer token the issuer's keys do not verify: 401 invalid_token (src/http/auth.ts). */
export const TokenRefused = createError('TP_TOKEN_REFUSED', '%s', 500);
/** A connect link that is not (or no longer) the caller's: 403 (src/routes/connections.ts). */
export const LinkRefused = createError('TP_LINK_REFUSED', '%s', 500);
const ProviderErrorBase = createError<[string]>('TP_PROVIDER_ERROR', '%s', 500);
/** An OAuth provider refused a code or a refresh; `revoked`: the grant is gone for good. */
export class ProviderError extends ProviderErrorBase {
  readonly revoked: boolean;
  constructor(message: string, revoked: boolean) {
    super(message);
    this.revoked = revoked;
  }
}
/** A sealed secret that does not open (another key, or tampered): the credential is treated as absent. */
export const SealBroken = createError('TP_SEAL_BROKEN', '%s', 500);
/** A workspace path outside the root (or unusable): the built-in answers a tool-level refusal. */
export const PathRefused = createError('TP_PATH_REFUSED', '%s', 500);
/** A tool's custom idempotency key function threw: the call fails as invalid_arguments. */
export const KeyFunctionError = createError('TP_KEY_FUNCTION', '%s', 500);
/** An HTTP endpoint behind a tool did not answer: upstream_unavailable. */
export const UpstreamConnectionError = createError('TP_UPSTREAM_CONNECTION', '%s', 500);
/** An MCP server behind a tool is not connected: upstream_unavailable. */
export const UpstreamDown = createError('TP_UPSTREAM_DOWN', '%s', 500);
const UpstreamRpcErrorBase = createError<[string]>('TP_UPSTREAM_RPC_ERROR', '%s', 502);
/** An MCP server's own JSON-RPC error for a request toolport forwarded (resources/read, prompts/get…): relayed with its code. */
export class UpstreamRpcError extends UpstreamRpcErrorBase {
  readonly rpcCode: number;
  readonly data: unknown;
  constructor(rpcCode: number, message: string, data?: unknown) {
    super(message);
    this.rpcCode = rpcCode;
    this.data = data;
  }
}

// Errors that stop the start: printed, never answered.
export const ConfigError = createError('TP_BAD_CONFIG', '%s', 500);
export const ToolsFileError = createError('TP_TOOLS_FILE', '%s', 500);
export const PluginLoadError = createError('TP_PLUGIN_LOAD', '%s', 500);
export const ToolDefinitionError = createError('TP_TOOL_DEFINITION', '%s', 500);
/** A schema that does not compile: an upstream tool is then left out, not the start stopped. */
// Made on ToolDefinitionError: a schema that does not compile is also a bad tool definition.
export const SchemaCompileError = createError('TP_SCHEMA_COMPILE', '%s', 500, ToolDefinitionError as unknown as ErrorConstructor);

/** Each error's instance type, under its constructor's name. */
export type InvalidBody = InstanceType<typeof InvalidBody>;
export type NoToolCall = InstanceType<typeof NoToolCall>;
export type InvalidHeader = InstanceType<typeof InvalidHeader>;
export type InvalidQuery = InstanceType<typeof InvalidQuery>;
export type NotFound = InstanceType<typeof NotFound>;
export type MethodNotAllowed = InstanceType<typeof MethodNotAllowed>;
export type StoreUnavailable = InstanceType<typeof StoreUnavailable>;
export type StoreNotDurable = InstanceType<typeof StoreNotDurable>;
export type Unauthorized = InstanceType<typeof Unauthorized>;
export type Forbidden = InstanceType<typeof Forbidden>;
export type HostNotAllowed = InstanceType<typeof HostNotAllowed>;
export type OriginNotAllowed = InstanceType<typeof OriginNotAllowed>;
export type RateLimited = InstanceType<typeof RateLimited>;
export type Closing = InstanceType<typeof Closing>;
export type NotReady = InstanceType<typeof NotReady>;
export type Overloaded = InstanceType<typeof Overloaded>;
export type AlreadyDecided = InstanceType<typeof AlreadyDecided>;
export type InvalidArguments = InstanceType<typeof InvalidArguments>;
export type JsonInputError = InstanceType<typeof JsonInputError>;
export type TokenRefused = InstanceType<typeof TokenRefused>;
export type LinkRefused = InstanceType<typeof LinkRefused>;
export type SealBroken = InstanceType<typeof SealBroken>;
export type PathRefused = InstanceType<typeof PathRefused>;
export type KeyFunctionError = InstanceType<typeof KeyFunctionError>;
export type UpstreamConnectionError = InstanceType<typeof UpstreamConnectionError>;
export type UpstreamDown = InstanceType<typeof UpstreamDown>;
export type ConfigError = InstanceType<typeof ConfigError>;
export type ToolsFileError = InstanceType<typeof ToolsFileError>;
export type PluginLoadError = InstanceType<typeof PluginLoadError>;
export type ToolDefinitionError = InstanceType<typeof ToolDefinitionError>;
export type SchemaCompileError = InstanceType<typeof SchemaCompileError>;

/** Query patterns and what they accept in words: a request that misses one is told the words, not the expression. */
const PATTERN_WORDS = new Map<string, string>();

/** A pattern the document carries (so clients see exactly what is accepted), answered in words when missed. */
export function wordedPattern(pattern: string, words: string): string {
  PATTERN_WORDS.set(pattern, words);
  return pattern;
}

/** Fastify's schema error as a sentence: a missed worded pattern says what it accepts. */
function validationDetail(error: Partial<FastifyError>): string | null {
  const first = error.validation?.[0];
  if (first?.keyword !== 'pattern') return null;
  const words = PATTERN_WORDS.get(String((first.params as { pattern?: unknown }).pattern));
  return words === undefined ? null : `${first.instancePath.slice(1) || error.validationContext} must be ${words}`;
}

/** code → [problem type slug, title] */
const PROBLEMS: Record<string, [string, string]> = {
  TP_INVALID_BODY: ['invalid-body', 'The request body is not acceptable JSON'],
  TP_NO_TOOL_CALL: ['no-tool-call', 'The body holds no recognisable tool call'],
  TP_INVALID_HEADER: ['invalid-header', 'A request header is invalid'],
  TP_INVALID_QUERY: ['invalid-query', 'A query parameter is invalid'],
  TP_NOT_FOUND: ['not-found', 'Not found'],
  TP_METHOD_NOT_ALLOWED: ['method-not-allowed', 'This path does not take this method'],
  TP_STORE_UNAVAILABLE: ['store-unavailable', 'The state store is unreachable'],
  TP_STORE_NOT_DURABLE: ['store-not-durable', "The state store's replicas did not acknowledge a write in time"],
  TP_UNAUTHORIZED: ['unauthorized', 'A valid API key or access token is required'],
  TP_FORBIDDEN: ['forbidden', 'This caller may not use this route'],
  TP_HOST_NOT_ALLOWED: ['host-not-allowed', 'This service does not answer this Host'],
  TP_ORIGIN_NOT_ALLOWED: ['origin-not-allowed', 'A page of this origin may not call this route'],
  TP_INSUFFICIENT_SCOPE: ['insufficient-scope', 'The access token lacks a scope this call needs'],
  TP_RATE_LIMITED: ['rate-limited', "The API key's rate limit is reached"],
  TP_CLOSING: ['shutting-down', 'The service is shutting down'],
  TP_NOT_READY: ['not-ready', 'A tool server behind toolport is down'],
  TP_OVERLOADED: ['overloaded', "The replica's event loop is lagging: new calls are refused for now"],
  TP_IDEMPOTENCY_KEY_IN_FLIGHT: ['idempotency-key-in-flight', 'A call with this Idempotency-Key is still running'],
  TP_IDEMPOTENCY_KEY_REUSED: ['idempotency-key-reused', 'This Idempotency-Key was used with another payload'],
  TP_ALREADY_DECIDED: ['already-decided', 'This approval is no longer pending'],
  TP_INVALID_ARGUMENTS: ['invalid-arguments', "The arguments do not satisfy the tool's schema"],
  FST_ERR_CTP_BODY_TOO_LARGE: ['body-too-large', 'The request body is larger than MAX_BODY_BYTES'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported-media-type', 'The request body must be application/json'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid-body', 'The request body is empty'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['invalid-body', 'Content-Length does not match the body'],
  FST_ERR_VALIDATION: ['invalid-request', 'The request is invalid'],
  FST_ERR_BAD_URL: ['bad-url', 'The URL is not valid'],
  FST_ERR_MAX_PARAM_LENGTH: ['uri-too-long', 'A path parameter is longer than 2048 characters'],
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  request_id?: string;
  /** insufficient-scope: the scope to ask the user for. */
  scope?: string;
}

export function problemOf(error: unknown): Problem {
  const fastifyError = error as Partial<FastifyError>;
  const status = typeof fastifyError.statusCode === 'number' ? fastifyError.statusCode : 500;
  if (status >= 500 && !['TP_STORE_UNAVAILABLE', 'TP_STORE_NOT_DURABLE', 'TP_CLOSING', 'TP_NOT_READY', 'TP_OVERLOADED'].includes(fastifyError.code ?? '')) {
    return { type: `${TYPE_BASE}internal`, title: 'Internal error', status: 500, detail: 'The request failed inside toolport; it has been logged.' };
  }
  const [slug, title] = PROBLEMS[fastifyError.code ?? ''] ?? ['request-error', 'The request cannot be served'];
  const code = fastifyError.code ?? '';
  // Fastify's own texts (its error codes without a mapping here) never reach the client: the title does.
  const worded = code === 'FST_ERR_VALIDATION' ? validationDetail(fastifyError) : null;
  const detail =
    code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
      ? 'send the body as Content-Type: application/json'
      : (worded ?? (code.startsWith('FST_') && !(code in PROBLEMS) ? title : (fastifyError.message ?? title)));
  return { type: `${TYPE_BASE}${slug}`, title, status, detail, ...(error instanceof InsufficientScope && { scope: error.scope }) };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const problem = problemOf(error);
  // A bug is logged with its stack; a store outage is logged once by the store, not per request.
  if (problem.status === 500) request.log.error({ err: error }, problem.title);
  problem.instance = request.url.split('?')[0];
  problem.request_id = String(request.id);
  if (problem.status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
  if (error instanceof IdempotencyKeyInFlight) reply.header('retry-after', String(error.retryAfterS));
  reply.header('x-request-id', request.id);
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

export type { FastifyErrorConstructor };
