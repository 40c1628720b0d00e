/** The per-request part of an invocation: headers checked, deadline start, caller, disconnect signal. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ApiKeys } from '../callers/keys.ts';
import { InvalidHeader } from '../errors.ts';
import type { TaskAccess, TaskJob } from '../tasks/view.ts';
import { Cancellation, type CancelSource } from '../tools/context.ts';
import { OPEN_CALLER, type CallerIdentity, type InvocationScope } from '../tools/invoke.ts';
import { SESSION_ID, type SessionSource } from '../tools/session-handle.ts';
import type { Toolsets } from '../toolsets/index.ts';

export { SESSION_ID } from '../tools/session-handle.ts';
const MAX_TIMEOUT_MS = 24 * 3600 * 1000;
/** A whole number of milliseconds from 0 to 86,400,000 (one day), as one pattern the document can carry too. */
export const TIMEOUT_MS = /^(?:[0-9]{1,7}|[0-7][0-9]{7}|8[0-5][0-9]{6}|86[0-3][0-9]{5}|86400000)$/;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  if (Array.isArray(value)) throw new InvalidHeader(`${name} must be sent once`);
  return value;
}

export function sessionIdOf(request: FastifyRequest): string | null {
  const id = header(request, 'x-session-id');
  if (id === undefined) return null;
  if (!SESSION_ID.test(id)) throw new InvalidHeader('X-Session-Id must match ^[A-Za-z0-9._:-]{1,128}$');
  return id;
}

function timeoutOf(request: FastifyRequest): number | null {
  const raw = header(request, 'x-timeout-ms');
  if (raw === undefined) return null;
  if (!TIMEOUT_MS.test(raw.trim()) || Number(raw) > MAX_TIMEOUT_MS) {
    throw new InvalidHeader(`X-Timeout-Ms must be a whole number of milliseconds from 0 to ${MAX_TIMEOUT_MS}`);
  }
  return Number(raw);
}

/** Fires when the client goes away before its answer was written (watched only once a call waits). */
class Disconnection implements CancelSource {
  readonly #reply: FastifyReply;
  constructor(reply: FastifyReply) {
    this.#reply = reply;
  }

  watch(target: Cancellation): void {
    const res = this.#reply.raw;
    const gone = () => {
      if (!res.writableFinished) target.cancel(new Error('the caller went away'));
    };
    if (res.destroyed || res.socket?.destroyed === true) gone();
    else res.once('close', gone);
  }
}

/** What the caller may call in this request: its key's tools, inside the request's toolset. Undefined = everything. */
export function allowsOf(request: FastifyRequest): ((tool: string) => boolean) | undefined {
  const callerAllows = request.caller?.allows;
  const toolset = request.toolset;
  if (toolset === null) return callerAllows;
  if (callerAllows === undefined) return toolset.allows;
  return (tool) => callerAllows(tool) && toolset.allows(tool);
}

/** Who the request is: the caller that authenticated it, with the bearer it presented (named by its key id, or `access_token` for a user's token). */
function callerOf(request: FastifyRequest): CallerIdentity {
  const caller = request.caller;
  if (caller === null) return OPEN_CALLER;
  const header = request.headers.authorization;
  const bearer = header !== undefined && /^bearer /i.test(header);
  return {
    id: caller.id,
    principal: caller.principal,
    user: caller.user,
    presented: bearer ? { name: caller.user === null ? caller.id : 'access_token', value: header.slice(7).trim() } : null,
  };
}

/** The scope of a request's calls in `format`, built once from its headers, caller and toolset; `session` when the protocol names it (MCP), else X-Session-Id. */
export function scopeOf(request: FastifyRequest, reply: FastifyReply, format: string, session?: { id: string | null; source: SessionSource }): InvocationScope {
  return {
    caller: callerOf(request),
    options: {
      requestId: String(request.id),
      format,
      ...((request.caller !== null || request.toolset !== null) && { allows: allowsOf(request)! }),
      ...(request.toolset !== null && { toolset: { name: request.toolset.definition.name, search: request.toolset.search } }),
      timeoutMs: timeoutOf(request),
      receivedAt: Date.now(),
      cancellation: new Cancellation(new Disconnection(reply)),
    },
    sinks: {
      sessionId: session === undefined ? sessionIdOf(request) : session.id,
      ...(session?.source === 'connection' && { sessionSource: 'connection' as const }),
      log: request.log as unknown as Logger,
    },
  };
}

/**
 * Who a task's runs are and what they may call: its key's tools (a key removed from the keys file
 * since may call nothing) inside the toolset it was started in (one the tools file no longer has: nothing).
 */
export function taskAccess(keys: ApiKeys | null, toolsets: Toolsets): (job: TaskJob) => TaskAccess {
  return (job) => {
    const caller = job.caller === null ? null : (keys?.callerOf(job.caller, job.user ?? null) ?? null);
    const callerAllows = job.caller === null ? undefined : (caller?.mayCall ?? (() => false));
    if (job.toolset === undefined) return { principal: caller?.principal ?? null, ...(callerAllows !== undefined && { allows: callerAllows }) };
    const toolset = toolsets.view(job.toolset.name, job.toolset.search);
    const inside = toolset === undefined ? () => false : toolset.allows;
    return { principal: caller?.principal ?? null, allows: callerAllows === undefined ? inside : (tool) => callerAllows(tool) && inside(tool) };
  };
}
