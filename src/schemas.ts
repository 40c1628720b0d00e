/** JSON Schemas of the HTTP payloads: documentation in the OpenAPI document and compiled serializers. */
import Type, { type Static, type TSchema } from 'typebox';

export const problemSchema = {
  $id: 'Problem',
  type: 'object',
  description: 'RFC 9457 problem details',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    request_id: { type: 'string' },
    scope: { type: 'string', description: 'insufficient-scope: the scope the access token lacks' },
  },
  required: ['type', 'title', 'status', 'detail'],
};

const anyJson = { description: 'any JSON value' };

/**
 * The result of one call, the one source of its shape: the TypeScript types (tools/outcome.ts) are
 * derived from it, the JSON answers are serialized with it and the OpenAPI document shows it. A field
 * missing here is missing from JSON answers, so every field a result may carry is declared here.
 */

/** A string of a fixed set, as `{type, enum}` (a union of literals would be an anyOf, slower to serialize). */
function stringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** The schema or null, as `type: [t, 'null']` (an anyOf would be slower to serialize). */
function nullable<T extends TSchema & { type: string }>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
}

export const ERROR_CODES = [
  'unknown_tool',
  'invalid_arguments',
  'handler_error',
  'deadline_exceeded',
  'in_progress',
  'result_invalid',
  'tool_failed',
  'cancelled',
  /** An HTTP or OpenAPI tool's endpoint answered 4xx (docs/tool-sources.md). */
  'upstream_rejected',
  /** The endpoint or MCP server behind a tool did not answer, answered 5xx or broke its protocol. */
  'upstream_unavailable',
  /** The upstream's max_concurrency or rate_per_min left no room for the call in time (docs/tool-sources.md). */
  'upstream_busy',
  /** An isolated handler's worker died under it: out of memory, process.exit, or an error thrown outside the handler. Not retryable. */
  'tool_crashed',
  /** A pinned upstream tool changed and the change is not accepted yet. */
  'tool_changed',
  /** The calling user has not connected a credential the tool needs (or its refresh failed): see `authorization`. */
  'authorization_required',
  /** The call waits for a person's approval (docs/approvals.md); repeating it later returns the outcome. */
  'approval_required',
  /** A policy rule refuses the call. */
  'policy_denied',
  /** A person refused the call. */
  'approval_denied',
  /** No one decided in time. */
  'approval_expired',
  /** A guardrail refuses the arguments or the result (docs/guardrails.md); `detail` names it. */
  'guardrail_denied',
  /** An identical call was lost after it started (docs/ledger.md): nothing runs until an admin resolves it. */
  'outcome_unknown',
  /** The handler asked the caller's client something (context.elicit, context.sample): see `input_requests`. */
  'input_required',
  /** The handler asked the caller's client something, and the caller has no way to answer. */
  'input_unavailable',
] as const;

export const toolErrorSchema = Type.Object({
  code: stringEnum(ERROR_CODES),
  detail: Type.String(),
  retry_after_s: Type.Optional(Type.Integer({ description: "set when waiting this long is known to help (an upstream's open breaker or spent rate)" })),
});

/** A content block the text cannot hold (an MCP image, audio, resource or resource_link block), passed as it is. */
export type Attachment = { type: string; [key: string]: unknown };

const attachmentSchema = Type.Unsafe<Attachment>(
  Type.Object({ type: Type.String({ description: 'image, audio, resource, resource_link…' }) }, { additionalProperties: true }),
);

export const resultRefSchema = Type.Object({ uri: Type.String(), url: Type.String(), chars: Type.Integer({ description: "the whole content's length" }) });

export const approvalRefSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  status: stringEnum(['pending', 'approved', 'denied', 'expired', 'executed']),
  expires_at: Type.String({ format: 'date-time' }),
});

/** What a guardrail did to a call (docs/guardrails.md). */
export const guardrailActionSchema = Type.Object({
  name: Type.String(),
  action: stringEnum(['redact', 'deny', 'flag']),
  where: stringEnum(['input', 'output']),
});

export const authorizationLinkSchema = Type.Object({ credential: Type.String(), url: Type.String() });

export const invocationResultSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  success: Type.Boolean(),
  message: Type.String(),
  value: Type.Unknown(anyJson),
  exclude_value_from_context: Type.Boolean(),
  error: nullable(toolErrorSchema),
  content: Type.String({ description: 'the text the model should see' }),
  tool_message: Type.Unknown({ ...anyJson, description: 'the provider-native result message, ready to append' }),
  replayed: Type.Boolean(),
  effect_id: nullable(Type.String()),
  lost_at: Type.Optional(Type.String({ description: 'with outcome_unknown: when the lost run started' })),
  idempotency_key: nullable(Type.String()),
  tool_hash: nullable(Type.String()),
  duration_ms: Type.Number(),
  approval: Type.Optional(
    Type.Object(approvalRefSchema.properties, {
      description: 'present when the call waits for (or was refused by) a person: the approval to decide at its url (docs/approvals.md)',
    }),
  ),
  guardrails: Type.Optional(
    Type.Array(guardrailActionSchema, {
      description: 'present when a guardrail acted on the call (docs/guardrails.md): which, what it did, and on the arguments or the result',
    }),
  ),
  result_ref: Type.Optional(
    Type.Object(resultRefSchema.properties, {
      description: 'present when content was cut: where its whole is kept for RESULT_TTL_S (GET the url, MCP resources/read the uri, or the result_read tool)',
    }),
  ),
  authorization: Type.Optional(
    Type.Object(authorizationLinkSchema.properties, {
      description:
        'present with authorization_required: a single-use link (10 minutes, bound to the calling user) where the person connects the credential; then the same call works',
    }),
  ),
  attachments: Type.Optional(
    Type.Array(attachmentSchema, {
      description: "present when the tool returned content blocks besides text (images, audio, resources): each as MCP's content block",
    }),
  ),
  input_requests: Type.Optional(
    Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      additionalProperties: true,
      description: 'with approval_required in a task whose approvers include the MCP client: the requests it may answer (tasks/update)',
    }),
  ),
});

/** A result as JSON answers carry it (`tool_message` set by the HTTP edge). */
export type InvocationAnswer = Static<typeof invocationResultSchema>;

export const turnResultSchema = Type.Object({
  results: Type.Array(invocationResultSchema),
  messages: Type.Array(Type.Unknown(anyJson), { description: 'what to append to the conversation' }),
});

export const toolListSchema = {
  type: 'object',
  properties: {
    tools: { type: 'array', items: { type: 'object', additionalProperties: true } },
    hash: { type: 'string', description: 'catalog hash, also the ETag' },
    tool_choice: anyJson,
  },
  required: ['tools', 'hash'],
};

export const problemResponse = (description = 'problem details') => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
});

export const problemResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((status) => [status, problemResponse()]));

const taskError = { type: 'object', properties: { code: { type: 'string' }, detail: { type: 'string' } }, required: ['code', 'detail'] };

/** A task (docs/tasks.md), as every /tasks route and a 202 from the invoke routes answer it. */
export const taskSchema = {
  $id: 'Task',
  type: 'object',
  properties: {
    task_id: { type: 'string' },
    status: { type: 'string', enum: ['working', 'input_required', 'completed', 'failed', 'cancelled'] },
    tool: { type: 'string', description: "the tool's name (a turn: the names of its calls, comma-separated)" },
    call_id: { type: 'string', description: "the call's id (a turn: the ids of its calls, comma-separated)" },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    ttl_s: { type: 'integer', description: 'how long the task is kept after it ends' },
    poll_interval_ms: { type: 'integer' },
    progress: { type: ['object', 'null'], properties: { done: { type: 'number' }, total: { type: 'number' } }, required: ['done'] },
    attempts: { type: 'integer', description: 'how many times a replica started running it (at most TASK_MAX_ATTEMPTS)' },
    queued: { type: 'boolean', description: 'working, but waiting for a free slot (TASK_CONCURRENCY) on some replica' },
    approval: { ...anyJson, description: 'input_required: the approval the task waits for' },
    authorization: { ...anyJson, description: 'input_required: the authorization (connect link) the task waits for' },
    input_requests: {
      type: 'object',
      additionalProperties: anyJson,
      description: 'input_required: requests for the MCP client, keyed (answered with tasks/update)',
    },
    result: { ...anyJson, description: 'once ended with a result: exactly what the synchronous request would have answered' },
    error: { ...taskError, description: 'a task that ended failed or cancelled without a result: why (worker_lost, cancelled, deadline_exceeded…)' },
  },
  required: ['task_id', 'status', 'tool', 'call_id', 'created_at', 'updated_at', 'ttl_s', 'poll_interval_ms', 'attempts', 'queued'],
};

/**
 * A route's schema that documents without validating: the route AJV coerces and strips, so routes whose
 * handler checks its own input (tool arguments, headers, enums with their own messages) use this.
 */
export const documentOnly = () => () => true;

/** 304 of a conditional GET: the If-None-Match tag is current. */
export const notModifiedResponse = { 304: { description: 'not modified: If-None-Match names the current ETag', type: 'null' } };

export const ifNoneMatchHeaders = {
  type: 'object',
  properties: { 'if-none-match': { type: 'string', description: 'an ETag of an earlier answer (weak tags, lists and * accepted)' } },
};
