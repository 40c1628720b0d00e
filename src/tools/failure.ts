/**
 * A handler's way to end its call with one of the failure codes of docs/formats.md rather than `handler_error`:
 * tool sources that forward calls (HTTP, OpenAPI, MCP) throw it when their upstream refuses,
 * fails or breaks its protocol. The dispatcher answers it as `failure(code, message, detail)`.
 */
import type { AuthorizationLink, ErrorCode, InvocationResult } from './outcome.ts';

/** The codes a handler may end its call with; the others belong to the dispatcher and the ledger. */
export type HandlerFailureCode = Extract<
  ErrorCode,
  'upstream_rejected' | 'upstream_unavailable' | 'upstream_busy' | 'tool_changed' | 'handler_error' | 'tool_crashed' | 'input_unavailable'
>;

export class ToolFailure extends Error {
  override name = 'ToolFailure';
  /**
   * @param message what the model should read: what happened and what to do next
   * @param detail  a short reason for `error.detail` and the log (never a secret)
   * @param retryAfterS when retrying is known to help: `error.retry_after_s`
   */
  constructor(
    readonly code: HandlerFailureCode,
    message: string,
    readonly detail: string,
    readonly retryAfterS: number | null = null,
  ) {
    super(message);
  }
}

/**
 * The calling user lacks a credential the tool needs (or its refresh failed): the call answers
 * `authorization_required` with the link where the person connects it (docs/credentials.md).
 */
export class AuthorizationRequired extends Error {
  override name = 'AuthorizationRequired';
  constructor(
    readonly authorization: AuthorizationLink,
    message: string,
    readonly detail: string,
  ) {
    super(message);
  }
}

/**
 * A nested call waits for a person (`approval_required`, `authorization_required`): the calling
 * handler ends its own call with that same failure, its approval or link included, so whoever
 * decides sees it and the caller knows to call again (code mode's programs).
 */
export class WaitsForPerson extends Error {
  override name = 'WaitsForPerson';
  constructor(readonly nested: InvocationResult) {
    super(nested.message);
  }
}

/**
 * A handler asked the caller's client something (context.elicit, context.sample) that is answered
 * by running the call again with the answers: the call ends `input_required` with the requests,
 * keyed; a task waits for them, an MCP 2026-07-28 client retries with them (docs/plugins.md).
 */
export class InputRequired extends Error {
  override name = 'InputRequired';
  constructor(readonly requests: Record<string, { method: string; params: Record<string, unknown> }>) {
    super('the call waits for its client to answer');
  }
}
