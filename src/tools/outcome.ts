/** The result of one call as every format reports it, and the tool-level failures (docs/formats.md). */
import type { Static } from 'typebox';
import type { ResultRef } from '../store/results.ts';
import type { approvalRefSchema, authorizationLinkSchema, ERROR_CODES, guardrailActionSchema, InvocationAnswer, toolErrorSchema } from '../schemas.ts';
import type { Attachment } from './types.ts';
import { withAttachmentsNamed, type ResultText } from './render.ts';

export type { ResultText };

/** The tool-level failure codes (docs/formats.md); each is commented where the schema lists it. */
export type ErrorCode = (typeof ERROR_CODES)[number];

export type ToolError = Static<typeof toolErrorSchema>;

/** What a guardrail did to a call (docs/guardrails.md). */
export type GuardrailAction = Static<typeof guardrailActionSchema>;

/** The key of a result's ResultText: a symbol, so no JSON of a result (an answer, a stored task) ever shows it. */
export const RESULT_TEXT: unique symbol = Symbol('resultText');

/**
 * A result as the dispatcher makes it: the answer's shape, with `content` still to render from its
 * text (the slot is kept in place, so a rendered answer's fields keep their order) and `tool_message`
 * set later by the HTTP edge.
 */
export interface InvocationResult extends Omit<InvocationAnswer, 'tool_message' | 'content'> {
  content?: string;
  tool_message?: unknown;
  readonly [RESULT_TEXT]: ResultText;
}

/** A result with its content rendered: what the formats turn into a provider's message. */
export type AnsweredResult = InvocationResult & { content: string };

/** An answered result as JSON carries it (an answer, a stored approval record): its text gone, its content there. */
export type ResultAnswer = Omit<AnsweredResult, typeof RESULT_TEXT>;

/** A result answered before, answered again: its text is the content it was answered with, already cut. */
export function answerAgain(stored: ResultAnswer): InvocationResult {
  return { ...stored, [RESULT_TEXT]: { message: stored.content, valueJson: null, limit: null } };
}

/** A single-use link, bound to the calling user, where the person connects a credential. */
export type AuthorizationLink = Static<typeof authorizationLinkSchema>;

/** How a result names its approval; every edge renders it its own way (HTTP, a task, MCP). */
export type ApprovalRef = Static<typeof approvalRefSchema>;

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
  replayOf?: { effectId: string; ledgerKey: string };
  /** Non-text content blocks of the handler's result (named in the content). */
  attachments?: Attachment[] | null;
  /** Where the whole of a content that was cut is kept (docs/large-results.md). */
  kept?: ResultRef;
  /** The tool's own `max_content_chars`; absent or null: the service's. */
  limit?: number | null;
}

/** The one constructor of an InvocationResult, so every path answers the same fields in the same order. */
export function invocationResult(call: CallIdentity, parts: ResultParts): InvocationResult {
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
    content: undefined,
    replayed: replay !== undefined,
    effect_id: replay?.effectId ?? null,
    idempotency_key: replay?.ledgerKey ?? null,
    tool_hash: parts.toolHash,
    duration_ms: elapsedMs(call.startedAt),
    ...(parts.kept !== undefined && { result_ref: parts.kept }),
    [RESULT_TEXT]: {
      message: attachments === null ? parts.message : withAttachmentsNamed(parts.message, attachments),
      valueJson: parts.excludeValue ? null : parts.valueJson,
      limit: parts.limit ?? null,
    },
  };
  if (attachments !== null) result.attachments = attachments;
  return result;
}

export function failure(call: CallIdentity, code: ErrorCode, message: string, detail: string, retryAfterS: number | null = null): InvocationResult {
  const error: ToolError = retryAfterS === null ? { code, detail } : { code, detail, retry_after_s: retryAfterS };
  return invocationResult(call, { success: false, message, value: null, excludeValue: false, valueJson: null, error, toolHash: call.toolHash });
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
export function authorizationRequired(call: CallIdentity, needed: { authorization: AuthorizationLink; message: string; detail: string }): InvocationResult {
  const result = failure(call, 'authorization_required', needed.message, needed.detail);
  result.authorization = needed.authorization;
  return result;
}
