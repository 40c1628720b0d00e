/**
 * Session handles (docs/sessions-and-planning.md, "Calls without a session"). The session built-ins (planning, and
 * introspect_session) take an optional `session_id` argument, so a model can keep its plan where
 * the transport carries no session: MCP 2026-07-28, gateways that forward no headers, and gateways
 * that open a new MCP connection (a new Mcp-Session-Id) for every call, as LiteLLM does.
 *
 * Which session a call of such a tool uses, first match wins:
 *   1. X-Session-Id (the caller pinned the session: the model cannot leave it);
 *   2. the `session_id` argument;
 *   3. the MCP connection's Mcp-Session-Id;
 *   4. a new session.
 * In cases 3 and 4 the model did not name the session, so the result carries the id
 * (`value.session_id`); in case 4 alone, where the client has no session at all, its message
 * also tells the model to pass it.
 */
import { randomUUID } from 'node:crypto';
import type { JsonSchema, ToolDefinition } from './types.ts';

export const SESSION_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
export const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

/** Where a request's session id came from; 'connection' (Mcp-Session-Id) gives way to a `session_id` argument. */
export type SessionSource = 'header' | 'connection';

const SESSION_ID_ARGUMENT = {
  type: 'string',
  pattern: SESSION_ID_PATTERN,
  description: 'The session that holds your plan, as an earlier planning result told you. Omit it on your first call: a session is then started for you.',
};

/** The definition with the optional `session_id` argument declared (and named in the result schema). */
export function withSessionArgument(definition: ToolDefinition): ToolDefinition {
  const parameters = definition.parameters;
  const properties = (parameters.properties ?? {}) as Record<string, unknown>;
  const taken: JsonSchema = { ...parameters, properties: { ...properties, session_id: SESSION_ID_ARGUMENT } };
  const result = definition.result;
  const resultProperties = result?.type === 'object' ? ((result.properties ?? {}) as Record<string, unknown>) : null;
  return {
    ...definition,
    parameters: taken,
    ...(resultProperties !== null && { result: { ...result, properties: { ...resultProperties, session_id: { type: 'string' } } } }),
  };
}

/** How a result names a session the model did not: `id` in the value, `hint` in the message too. */
export type SessionAnnouncement = false | 'id' | 'hint';

export interface ChosenSession {
  id: string;
  announce: SessionAnnouncement;
}

/** The session a session built-in runs in (see the order above). */
export function chooseSession(sessionId: string | null, source: SessionSource | undefined, params: Record<string, unknown>): ChosenSession {
  if (sessionId !== null && source !== 'connection') return { id: sessionId, announce: false };
  const given = params.session_id;
  if (typeof given === 'string') return { id: given, announce: false };
  // A client with a session (Mcp-Session-Id) keeps it by itself: the id alone, no advice.
  return sessionId === null ? { id: randomUUID(), announce: 'hint' } : { id: sessionId, announce: 'id' };
}
