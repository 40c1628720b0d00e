/**
 * What a task is, as the store keeps it (head, job, outcome: JSON text) and as clients see it: the
 * HTTP task object of docs/tasks.md and the MCP `Task` of the 2025-11-25 revision.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Principal } from '../callers/principal.ts';
import { isObject } from '../json.ts';
import type { TaskRecord, TaskStatus } from '../store/tasks.ts';
import type { InvocationScope, ToolCall, ToolsetRef } from '../tools/invoke.ts';
import type { UserIdentity } from '../tools/types.ts';
import type { TraceLink } from '../tracing/index.ts';

/** Everything a replica needs to run a task, again if need be: the very request, parsed. */
export interface TaskJob {
  /** The provider format the result is rendered in (`mcp` for a task started over MCP). */
  format: string;
  turn: boolean;
  /** Call ids are made at creation when the body had none, so every run answers the same ids. */
  calls: ToolCall[];
  sessionId: string | null;
  /** Where the session id came from (an MCP connection's gives way to a session_id argument). */
  sessionSource?: InvocationScope['sinks']['sessionSource'];
  caller: string | null;
  /** The toolset the task was started in: every run of it (resumed, approved, retried) stays inside it. */
  toolset?: ToolsetRef;
  /** The verified user the task runs for (`context.user`, and what their access rules allow). */
  user?: UserIdentity;
  /** The caller's X-Timeout-Ms, counted from `receivedAt`. */
  timeoutMs: number | null;
  receivedAt: number;
  requestId: string;
  /** The trace context of the request that created the task, when tracing: its runs are linked to it. */
  trace?: TraceLink;
  /** Answers given to the task's input requests, for the run after a resume (scope.inputResponses). */
  inputResponses?: Record<string, unknown>;
}

/** Who runs a task's calls, and what they may call (absent: every tool). */
export interface TaskAccess {
  principal: Principal | null;
  allows?: (tool: string) => boolean;
}

/**
 * What a task in `input_required` waits for: an approval (the approval record's public part), an
 * authorization (a connect link), and/or `inputRequests` for an MCP client (keyed server-to-client
 * requests, e.g. `elicitation/create`), answered through `tasks/update`.
 */
export interface TaskInput {
  approval?: unknown;
  authorization?: unknown;
  inputRequests?: Record<string, unknown>;
}

/**
 * The input a single call's result says it waits for (a failure carrying `approval`,
 * `authorization` or `input_requests`), or null. A turn's results are answered as they are.
 */
export function inputOf(body: object): TaskInput | null {
  if ('results' in body) return null;
  const result = body as Record<string, unknown>;
  if (result.success !== false) return null;
  const input: TaskInput = {};
  // Only an approval still pending is waited for: an approved call that failed carries its executed approval.
  if (isObject(result.approval) && result.approval.status === 'pending') input.approval = result.approval;
  if (isObject(result.authorization)) input.authorization = result.authorization;
  if (isObject(result.input_requests)) input.inputRequests = result.input_requests;
  return Object.keys(input).length === 0 ? null : input;
}

/** The job of a request started as a task: calls without an id get one now, so every run answers the same ids. */
export function taskJobOf(format: string, turn: boolean, calls: readonly ToolCall[], scope: InvocationScope): TaskJob {
  return {
    format,
    turn,
    calls: calls.map((call) => ({ ...call, id: call.id ?? `call_${randomUUID()}` })),
    sessionId: scope.sinks.sessionId,
    ...(scope.sinks.sessionSource !== undefined && { sessionSource: scope.sinks.sessionSource }),
    caller: scope.caller.id,
    ...(scope.caller.user !== null && { user: scope.caller.user }),
    ...(scope.options.toolset !== undefined && { toolset: scope.options.toolset }),
    timeoutMs: scope.options.timeoutMs,
    receivedAt: scope.options.receivedAt,
    requestId: scope.options.requestId,
  };
}

export interface TaskHead {
  task_id: string;
  tool: string;
  call_id: string;
  created_at: string;
  ttl_s: number;
  poll_interval_ms: number;
}

export interface TaskError {
  code: string;
  detail: string;
}

/** How a task ended: the result the synchronous request would have answered, or an error instead. */
export type TaskOutcome = { result: unknown } | { error: TaskError };

export interface TaskView extends TaskHead {
  status: TaskStatus;
  updated_at: string;
  progress: { done: number; total?: number } | null;
  /** How many times a replica started running it. */
  attempts: number;
  /** Working, but waiting for a free slot. */
  queued: boolean;
  /** While `input_required`: what it waits for. */
  approval?: unknown;
  authorization?: unknown;
  input_requests?: Record<string, unknown>;
  result?: unknown;
  error?: TaskError;
}

let lastMs = 0;
let sequence = 0;

/**
 * A UUIDv7-shaped id: the first 48 bits are the creation time in ms, so ids sort by creation and a
 * listing pages by id alone (newest first). Within one millisecond the next 12 bits count up
 * (RFC 9562 §6.2, method 1), so ids made by one process in the same millisecond still sort in order.
 */
export function newTaskId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    sequence = 0;
  } else if (++sequence > 0xfff) {
    lastMs += 1;
    sequence = 0;
  }
  const time = lastMs.toString(16).padStart(12, '0');
  const rand = randomBytes(8).toString('hex');
  const variant = ((parseInt(rand[0]!, 16) & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${sequence.toString(16).padStart(3, '0')}-${variant}${rand.slice(1, 4)}-${rand.slice(4, 16)}`;
}

export const TASK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function viewOf(record: TaskRecord): TaskView {
  const head = JSON.parse(record.head) as TaskHead;
  const view: TaskView = {
    ...head,
    status: record.status,
    updated_at: new Date(record.updatedAt).toISOString(),
    progress: record.progress === null ? null : (JSON.parse(record.progress) as TaskView['progress']),
    attempts: record.attempts,
    queued: record.queued,
  };
  if (record.outcome !== null) Object.assign(view, JSON.parse(record.outcome) as TaskOutcome);
  if (record.input !== null) {
    const input = JSON.parse(record.input) as TaskInput;
    if (input.approval !== undefined) view.approval = input.approval;
    if (input.authorization !== undefined) view.authorization = input.authorization;
    if (input.inputRequests !== undefined) view.input_requests = input.inputRequests;
  }
  return view;
}

/** The 2025-11-25 MCP `Task` (tasks/get, tasks/list, tasks/cancel, CreateTaskResult). */
export function mcpTaskOf(view: TaskView): Record<string, unknown> {
  return {
    taskId: view.task_id,
    status: view.status,
    ttl: view.ttl_s * 1000,
    createdAt: view.created_at,
    lastUpdatedAt: view.updated_at,
    pollInterval: view.poll_interval_ms,
    ...(view.error !== undefined && { statusMessage: `${view.error.code}: ${view.error.detail}` }),
  };
}
