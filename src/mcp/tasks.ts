/**
 * MCP tasks (revision 2025-11-25): a `tools/call` with `params.task` answers a CreateTaskResult and
 * runs as a task; `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` read the same task
 * store as /tasks, so a task started over MCP can be read over HTTP and the other way round.
 */
import type { Caller } from '../callers/keys.ts';
import type { TaskRecord } from '../store/tasks.ts';
import { TaskRunner } from '../tasks/runner.ts';
import { mcpTaskOf, taskJobOf, viewOf } from '../tasks/view.ts';
import type { InvocationScope } from '../tools/invoke.ts';
import { ErrorCode, ProtocolFault, type JsonRpcRequest } from './protocol.ts';
import { callToolResultOf, McpTasksExtension } from './tasks-extension.ts';

/** The `tasks` server capability: tools/call may be task-augmented; tasks can be listed and cancelled. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
/** What every tool says of itself over MCP: it may be called as a task or not. */
export const TASK_EXECUTION = { taskSupport: 'optional' } as const;

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const PAGE = 50;
/** tasks/result holds the answer until the task ends, re-reading it at least this often. */
const RESULT_WAIT_MS = 30_000;

export const TASK_METHODS = new Set(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']);

function taskIdOf(message: JsonRpcRequest): string {
  const id = message.params?.taskId;
  if (typeof id !== 'string' || id === '') throw new ProtocolFault(ErrorCode.InvalidParams, `${message.method} needs params.taskId (a string)`);
  return id;
}

/** How long a 2026-07-28 tools/call may take to be answered inline rather than with a task handle. */
export const DEFAULT_TASK_INLINE_MS = 1000;

export class McpTasks {
  readonly #tasks: TaskRunner;
  /** The 2026-07-28 extension (io.modelcontextprotocol/tasks) on the same tasks. */
  readonly extension: McpTasksExtension;

  constructor(tasks: TaskRunner, inlineMs = DEFAULT_TASK_INLINE_MS) {
    this.#tasks = tasks;
    this.extension = new McpTasksExtension(tasks, inlineMs);
  }

  /** A task-augmented tools/call: the call starts as a task and the answer is its CreateTaskResult. */
  async start(name: string, args: unknown, scope: InvocationScope): Promise<Record<string, unknown>> {
    const job = taskJobOf('mcp', false, [{ id: null, name, arguments: args ?? {}, parsed: true }], scope);
    return { task: mcpTaskOf(await this.#tasks.start(job)) };
  }

  /** tasks/get, tasks/result, tasks/list, tasks/cancel. */
  async request(message: JsonRpcRequest, caller: Caller | null): Promise<Record<string, unknown>> {
    switch (message.method) {
      case 'tasks/get':
        return mcpTaskOf(viewOf(await this.#visible(taskIdOf(message), caller)));
      case 'tasks/result':
        return this.#result(taskIdOf(message), caller);
      case 'tasks/cancel':
        return this.#cancel(taskIdOf(message), caller);
      case 'tasks/list':
        return this.#list(message.params?.cursor, caller);
    }
    throw new ProtocolFault(ErrorCode.MethodNotFound, `method not found: ${message.method.slice(0, 100)}`);
  }

  async #visible(id: string, caller: Caller | null): Promise<TaskRecord> {
    const record = await this.#tasks.get(id);
    if (record === null || !TaskRunner.visibleTo(record, caller)) throw new ProtocolFault(ErrorCode.InvalidParams, `no task ${id.slice(0, 100)}`);
    return record;
  }

  /** Holds the answer until the task ends, then answers what the tools/call would have. */
  async #result(id: string, caller: Caller | null): Promise<Record<string, unknown>> {
    let record: TaskRecord | null = await this.#visible(id, caller);
    while (record.status === 'working' || record.status === 'input_required') {
      record = await this.#tasks.wait(id, RESULT_WAIT_MS, true);
      if (record === null) throw new ProtocolFault(ErrorCode.InvalidParams, `no task ${id.slice(0, 100)}`);
    }
    const view = viewOf(record);
    if (view.status !== 'completed' || view.result === undefined) {
      const error = view.error ?? { code: view.status, detail: `the task ended ${view.status}` };
      throw new ProtocolFault(ErrorCode.InternalError, `the task ended ${view.status}: ${error.detail}`, 400, error);
    }
    return { ...callToolResultOf(view.result), _meta: { [RELATED_TASK]: { taskId: id } } };
  }

  async #cancel(id: string, caller: Caller | null): Promise<Record<string, unknown>> {
    const record = await this.#visible(id, caller);
    const live = record.status === 'working' || record.status === 'input_required';
    if (!live || !(await this.#tasks.cancel(id))) {
      throw new ProtocolFault(ErrorCode.InvalidParams, `the task has already ended (${live ? 'just now' : record.status})`);
    }
    return mcpTaskOf(viewOf((await this.#tasks.get(id)) ?? record));
  }

  async #list(cursor: unknown, caller: Caller | null): Promise<Record<string, unknown>> {
    if (cursor !== undefined && typeof cursor !== 'string') throw new ProtocolFault(ErrorCode.InvalidParams, 'params.cursor must be a string');
    const page = await this.#tasks.list(caller?.admin === true ? 'all' : { owner: caller?.id ?? null }, cursor ?? null, PAGE);
    return { tasks: page.records.map((record) => mcpTaskOf(viewOf(record))), ...(page.next !== null && { nextCursor: page.next }) };
  }
}
