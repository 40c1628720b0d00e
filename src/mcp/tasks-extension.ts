/**
 * MCP tasks as the 2026-07-28 extension `io.modelcontextprotocol/tasks` serves them (SEP-2663):
 * server-directed creation — a `tools/call` from a client that declares the extension runs as a
 * task, and is answered inline when it completes within a short wait, else with a `CreateTaskResult`
 * (`resultType: "task"`) — then `tasks/get` (the result or error inline), `tasks/update` (answers to
 * `inputRequests`) and `tasks/cancel`. The same task store as /tasks and the 2025-11-25 methods.
 */
import type { Caller } from '../callers/keys.ts';
import type { TaskRecord } from '../store/tasks.ts';
import { TaskRunner } from '../tasks/runner.ts';
import { taskJobOf, viewOf, type TaskView } from '../tasks/view.ts';
import type { InvocationScope } from '../tools/invoke.ts';
import { isObject } from '../json.ts';
import { ErrorCode, META, metaOf, ProtocolFault, type JsonRpcRequest } from './protocol.ts';
import { renderMcpCallToolResult } from '../formats/mcp.ts';
import type { AnsweredResult } from '../tools/outcome.ts';

/** A turn's results as one CallToolResult: every block in call order, an error if any call failed. */
export function callToolResultOf(result: unknown): Record<string, unknown> {
  if (typeof result === 'object' && result !== null && 'results' in result) {
    const rendered = (result as { results: AnsweredResult[] }).results.map(renderMcpCallToolResult);
    return { content: rendered.flatMap((r) => r.content), isError: rendered.some((r) => r.isError) };
  }
  return { ...renderMcpCallToolResult(result as AnsweredResult) };
}

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const EXTENSION_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** Whether a 2026-07-28 request's client declared the tasks extension in its per-request capabilities. */
export function declaresTasks(params: Record<string, unknown> | undefined): boolean {
  const capabilities = metaOf(params)?.[META.clientCapabilities];
  return isObject(capabilities) && isObject(capabilities.extensions) && isObject(capabilities.extensions[TASKS_EXTENSION]);
}

const MISSING_CAPABILITY = () =>
  new ProtocolFault(ErrorCode.MissingRequiredClientCapability, 'Missing required client capability', 400, {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });

/** A task as the extension shows it: its status with the result, error or input requests inline. */
export function extensionTaskOf(view: TaskView): Record<string, unknown> {
  const task: Record<string, unknown> = {
    taskId: view.task_id,
    status: view.status,
    createdAt: view.created_at,
    lastUpdatedAt: view.updated_at,
    ttlMs: view.ttl_s * 1000,
    pollIntervalMs: view.poll_interval_ms,
  };
  if (view.status === 'input_required') {
    task.inputRequests = view.input_requests ?? {};
    if (view.approval !== undefined) task.statusMessage = 'waiting for a person to approve this call';
    else if (view.authorization !== undefined) task.statusMessage = 'waiting for an authorization';
  } else if (view.status === 'completed' && view.result !== undefined) {
    task.result = callToolResultOf(view.result);
  } else if (view.error !== undefined) {
    task.statusMessage = `${view.error.code}: ${view.error.detail}`;
    if (view.status === 'failed') task.error = { code: ErrorCode.InternalError, message: view.error.detail, data: view.error };
  }
  return task;
}

export class McpTasksExtension {
  readonly #tasks: TaskRunner;
  readonly #inlineMs: number;

  /** `inlineMs`: how long a call may take to be answered inline rather than with a task handle (0: always a handle). */
  constructor(tasks: TaskRunner, inlineMs: number) {
    this.#tasks = tasks;
    this.#inlineMs = inlineMs;
  }

  /** A tools/call of a client that declared the extension: the result when it completes in time, else the task. */
  async call(name: string, args: unknown, scope: InvocationScope): Promise<Record<string, unknown>> {
    const job = taskJobOf('mcp', false, [{ id: null, name, arguments: args ?? {}, parsed: true }], scope);
    const started = await this.#tasks.start(job);
    let view = started;
    if (this.#inlineMs > 0) {
      const record = await this.#tasks.wait(started.task_id, this.#inlineMs);
      if (record !== null) view = viewOf(record);
      if (view.status === 'completed' && view.result !== undefined) return { resultType: 'complete', ...callToolResultOf(view.result) };
    }
    const { result: _result, error: _error, inputRequests: _input, ...task } = extensionTaskOf(view);
    return { resultType: 'task', ...task };
  }

  /** tasks/get, tasks/update, tasks/cancel of the 2026-07-28 era. */
  async request(message: JsonRpcRequest, caller: Caller | null): Promise<Record<string, unknown>> {
    if (!declaresTasks(message.params)) throw MISSING_CAPABILITY();
    const id = message.params?.taskId;
    if (typeof id !== 'string' || id === '') throw new ProtocolFault(ErrorCode.InvalidParams, `${message.method} needs params.taskId (a string)`);
    const record = await this.#visible(id, caller);
    switch (message.method) {
      case 'tasks/get':
        return { resultType: 'complete', ...extensionTaskOf(viewOf(record)) };
      case 'tasks/update':
        return this.#update(record, message.params!.inputResponses);
      default:
        if (record.status === 'working' || record.status === 'input_required') await this.#tasks.cancel(id);
        return { resultType: 'complete' };
    }
  }

  async #visible(id: string, caller: Caller | null): Promise<TaskRecord> {
    const record = await this.#tasks.get(id);
    if (record === null || !TaskRunner.visibleTo(record, caller))
      throw new ProtocolFault(ErrorCode.InvalidParams, `Failed to retrieve task: Task not found (${id.slice(0, 100)})`);
    return record;
  }

  /** Answers to outstanding input requests resume the task; answers to keys not outstanding are ignored. */
  async #update(record: TaskRecord, responses: unknown): Promise<Record<string, unknown>> {
    if (!isObject(responses)) throw new ProtocolFault(ErrorCode.InvalidParams, 'tasks/update needs params.inputResponses (an object)');
    const outstanding = record.status === 'input_required' ? (viewOf(record).input_requests ?? {}) : {};
    const answered = Object.fromEntries(Object.entries(responses).filter(([key]) => Object.hasOwn(outstanding, key)));
    if (Object.keys(answered).length > 0) await this.#tasks.resume(record.id, answered);
    return { resultType: 'complete' };
  }
}
