/** The result of one call as every format reports it, and the tool-level failures (docs/formats.md). */
import type { ResultRef } from '../store/results.ts';
import type { Attachment } from './types.ts';
import { renderContent, withAttachmentsNamed } from './render.ts';

export type ErrorCode =
  | 'unknown_tool'
  | 'invalid_arguments'
  | 'handler_error'
  | 'deadline_exceeded'
  | 'in_progress'
  | 'result_invalid'
  | 'tool_failed'
  | 'cancelled'
  /** An HTTP or OpenAPI tool's endpoint answered 4xx (docs/tool-sources.md). */
  | 'upstream_rejected'
  /** The endpoint or MCP server behind a tool did not answer, answered 5xx or broke its protocol. */
  | 'upstream_unavailable'
  /** The upstream's max_concurrency or rate_per_min left no room for the call in time (docs/tool-sources.md). */
  | 'upstream_busy'
  /** An isolated handler's worker died under it: out of memory, process.exit, or an error thrown outside the handler. Not retryable. */
  | 'tool_crashed'
  /** A pinned upstream tool changed and the change is not accepted yet. */
  | 'tool_changed'
  /** The calling user has not connected a credential the tool needs (or its refresh failed): see `authorization`. */
  | 'authorization_required'
  /** The call waits for a person's approval (docs/approvals.md); repeating it later returns the outcome. */
  | 'approval_required'
  /** A policy rule refuses the call. */
  | 'policy_denied'
  /** A person refused the call. */
  | 'approval_denied'
  /** No one decided in time. */
  | 'approval_expired'
  /** The handler asked the caller's client something (context.elicit, context.sample): see `input_requests`. */
  | 'input_required'
  /** The handler asked the caller's client something, and the caller has no way to answer. */
  | 'input_unavailable'
  /** A guardrail refuses the arguments or the result (docs/guardrails.md); `detail` names it. */
  | 'guardrail_denied';

/** What a guardrail did to a call (docs/guardrails.md). */
export interface GuardrailAction {
  name: string;
  action: 'redact' | 'deny' | 'flag';
  where: 'input' | 'output';
}

export interface ToolError {
  code: ErrorCode;
  detail: string;
  /** Set when waiting this many seconds is known to help: an upstream's open breaker or spent rate. */
  retry_after_s?: number;
}

export interface InvocationResult {
  id: string;
  name: string;
  success: boolean;
  message: string;
  value: unknown;
  exclude_value_from_context: boolean;
  error: ToolError | null;
  content: string;
  replayed: boolean;
  effect_id: string | null;
  idempotency_key: string | null;
  tool_hash: string | null;
  duration_ms: number;
  /** Non-text content blocks of the handler's result (ToolResult.attachments), absent when none. */
  attachments?: Attachment[];
  /** Set by the HTTP edge: the result as the request's format appends it to a conversation. */
  tool_message?: unknown;
  /** Set when `content` was cut and its whole is kept as a result resource (docs/large-results.md). */
  result_ref?: ResultRef;
  /** Set with `authorization_required`: where the person connects the credential (docs/credentials.md). */
  authorization?: AuthorizationLink;
  /** Set when the call waits for, or was refused by, a person (docs/approvals.md). */
  approval?: ApprovalRef;
  /**
   * Set with `approval_required` in a task whose approvers include the client (the form its MCP client may answer),
   * and with `input_required` (what the handler asked): keyed requests, answered by key (tasks/update, POST /tasks/{id}/input).
   */
  input_requests?: Record<string, unknown>;
  /** What the guardrails did to the call, when they did anything (docs/guardrails.md). */
  guardrails?: GuardrailAction[];
}

/** A single-use link, bound to the calling user, where the person connects a credential. */
export interface AuthorizationLink {
  credential: string;
  url: string;
}

/** How a result names its approval; every edge renders it its own way (HTTP, a task, MCP). */
export interface ApprovalRef {
  id: string;
  url: string;
  status: 'pending' | 'approved' | 'denied' | 'expired' | 'executed';
  expires_at: string;
}

export interface CallIdentity {
  id: string;
  name: string;
  toolHash: string | null;
  startedAt: number;
}

export function elapsedMs(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 1000) / 1000;
}

/** What a call produced, and under which definition (or recorded effect): the parts of a result. */
export interface ResultParts {
  success: boolean;
  message: string;
  value: unknown;
  excludeValue: boolean;
  /** `value` as JSON text for the content; null leaves the value out of it. */
  valueJson: string | null;
  error: ToolError | null;
  toolHash: string | null;
  /** Set when the result is the replay of a recorded effect. */
  replayOf?: { effectId: string; idempotencyKey: string };
  /** Non-text content blocks of the handler's result (named in the content). */
  attachments?: Attachment[] | null;
  /** Where the whole of a content that was cut is kept (docs/large-results.md). */
  kept?: ResultRef;
}

/** The one constructor of an InvocationResult, so every path answers the same fields in the same order. */
export function invocationResult(call: CallIdentity, parts: ResultParts, maxChars: number): InvocationResult {
  const replay = parts.replayOf;
  const attachments = parts.attachments ?? null;
  const result: InvocationResult = {
    id: call.id,
    name: call.name,
    success: parts.success,
    message: parts.message,
    value: parts.value,
    exclude_value_from_context: parts.excludeValue,
    error: parts.error,
    content: renderContent(
      attachments === null ? parts.message : withAttachmentsNamed(parts.message, attachments),
      parts.excludeValue ? null : parts.valueJson,
      maxChars,
      parts.kept ?? null,
    ),
    replayed: replay !== undefined,
    effect_id: replay?.effectId ?? null,
    idempotency_key: replay?.idempotencyKey ?? null,
    tool_hash: parts.toolHash,
    duration_ms: elapsedMs(call.startedAt),
    ...(parts.kept !== undefined && { result_ref: parts.kept }),
  };
  if (attachments !== null) result.attachments = attachments;
  return result;
}

export function failure(
  call: CallIdentity,
  code: ErrorCode,
  message: string,
  detail: string,
  maxChars: number,
  retryAfterS: number | null = null,
): InvocationResult {
  const error: ToolError = retryAfterS === null ? { code, detail } : { code, detail, retry_after_s: retryAfterS };
  return invocationResult(call, { success: false, message, value: null, excludeValue: false, valueJson: null, error, toolHash: call.toolHash }, maxChars);
}

/** A thrown value as text, whatever was thrown (a non-Error, or an object whose toString throws). */
export function reasonOf(thrown: unknown): string {
  try {
    const text = thrown instanceof Error ? thrown.message : typeof thrown === 'string' ? thrown : JSON.stringify(thrown);
    const clean = (text ?? String(thrown)).trim();
    return clean === '' ? 'an error without a message' : clean.length > 500 ? `${clean.slice(0, 500)}…` : clean;
  } catch {
    return 'an error that cannot be shown';
  }
}

/** The result of a call whose user lacks a credential: `authorization_required` with the link (docs/credentials.md). */
export function authorizationRequired(
  call: CallIdentity,
  needed: { authorization: AuthorizationLink; message: string; detail: string },
  maxChars: number,
): InvocationResult {
  const result = failure(call, 'authorization_required', needed.message, needed.detail, maxChars);
  result.authorization = needed.authorization;
  return result;
}
