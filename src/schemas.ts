/** JSON Schemas of the HTTP payloads: documentation in the OpenAPI document and compiled serializers. */

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

export const invocationResultSchema = {
  type: 'object' as const,
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    success: { type: 'boolean' },
    message: { type: 'string' },
    value: anyJson,
    exclude_value_from_context: { type: 'boolean' },
    error: {
      type: ['object', 'null'],
      properties: {
        code: {
          type: 'string',
          enum: [
            'unknown_tool',
            'invalid_arguments',
            'handler_error',
            'deadline_exceeded',
            'in_progress',
            'result_invalid',
            'tool_failed',
            'cancelled',
            'upstream_rejected',
            'upstream_unavailable',
            'upstream_busy',
            'tool_crashed',
            'tool_changed',
            'authorization_required',
            'approval_required',
            'policy_denied',
            'approval_denied',
            'approval_expired',
            'guardrail_denied',
            'input_required',
            'input_unavailable',
          ],
        },
        detail: { type: 'string' },
        retry_after_s: { type: 'integer', description: "set when waiting this long is known to help (an upstream's open breaker or spent rate)" },
      },
      required: ['code', 'detail'],
    },
    content: { type: 'string', description: 'the text the model should see' },
    tool_message: { ...anyJson, description: 'the provider-native result message, ready to append' },
    replayed: { type: 'boolean' },
    effect_id: { type: ['string', 'null'] },
    idempotency_key: { type: ['string', 'null'] },
    tool_hash: { type: ['string', 'null'] },
    duration_ms: { type: 'number' },
    approval: {
      type: 'object',
      description: 'present when the call waits for (or was refused by) a person: the approval to decide at its url (docs/approvals.md)',
      properties: {
        id: { type: 'string' },
        url: { type: 'string' },
        status: { type: 'string', enum: ['pending', 'approved', 'denied', 'expired', 'executed'] },
        expires_at: { type: 'string', format: 'date-time' },
      },
      required: ['id', 'url', 'status', 'expires_at'],
    },
    guardrails: {
      type: 'array',
      description: 'present when a guardrail acted on the call (docs/guardrails.md): which, what it did, and on the arguments or the result',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          action: { type: 'string', enum: ['redact', 'deny', 'flag'] },
          where: { type: 'string', enum: ['input', 'output'] },
        },
        required: ['name', 'action', 'where'],
      },
    },
    result_ref: {
      type: 'object',
      description: 'present when content was cut: where its whole is kept for RESULT_TTL_S (GET the url, MCP resources/read the uri, or the result_read tool)',
      properties: { uri: { type: 'string' }, url: { type: 'string' }, chars: { type: 'integer' } },
      required: ['uri', 'url', 'chars'],
    },
    authorization: {
      type: 'object',
      description:
        'present with authorization_required: a single-use link (10 minutes, bound to the calling user) where the person connects the credential; then the same call works',
      properties: { credential: { type: 'string' }, url: { type: 'string' } },
      required: ['credential', 'url'],
    },
  },
  required: [
    'id',
    'name',
    'success',
    'message',
    'value',
    'exclude_value_from_context',
    'error',
    'content',
    'tool_message',
    'replayed',
    'effect_id',
    'idempotency_key',
    'tool_hash',
    'duration_ms',
  ],
};

export const turnResultSchema = {
  type: 'object' as const,
  properties: {
    results: { type: 'array', items: invocationResultSchema },
    messages: { type: 'array', items: anyJson, description: 'what to append to the conversation' },
  },
  required: ['results', 'messages'],
};

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
