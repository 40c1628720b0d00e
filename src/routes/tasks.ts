/**
 * Tasks over HTTP (docs/tasks.md): `Prefer: respond-async` on the invoke routes answers 202 with the task;
 * GET /tasks/{id} (long-poll with ?wait_ms=), DELETE /tasks/{id} (cancel), POST /tasks/{id}/input (answers to
 * what it asked), GET /tasks (newest first).
 * A task is its creator's: another key gets 404, as for a task that does not exist.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidQuery, NotFound, wordedPattern } from '../errors.ts';
import type { ParsedCalls } from '../formats/types.ts';
import { problemResponses } from '../schemas.ts';

const taskRef = { $ref: 'Task#' };
import type { TaskRecord } from '../store/tasks.ts';
import type { InvocationScope } from '../tools/invoke.ts';
import { TaskRunner } from '../tasks/runner.ts';
import { TASK_ID, taskJobOf, viewOf } from '../tasks/view.ts';

const MAX_WAIT_MS = 30_000;
/** A whole number of milliseconds from 0 to 30000. */
const WAIT_PATTERN = wordedPattern('^(?:[0-9]{1,4}|[12][0-9]{4}|30000)$', `a whole number from 0 to ${MAX_WAIT_MS}`);
const MAX_PAGE = 100;
const DEFAULT_PAGE = 50;

const idParams = { type: 'object', properties: { id: { type: 'string', pattern: TASK_ID.source } }, required: ['id'] };

/** `Prefer: respond-async` (RFC 7240), among other preferences. */
export function prefersAsync(request: FastifyRequest): boolean {
  const prefer = request.headers.prefer;
  if (prefer === undefined) return false;
  const values = Array.isArray(prefer) ? prefer : [prefer];
  return values.some((value) => value.split(/[,;]/).some((token) => token.trim().toLowerCase() === 'respond-async'));
}

/** Starts the calls as a task and answers 202 with it. */
export async function startTask(tasks: TaskRunner, reply: FastifyReply, format: string, parsed: ParsedCalls, scope: InvocationScope): Promise<FastifyReply> {
  const job = taskJobOf(format, parsed.turn, parsed.calls, scope);
  const task = await tasks.start(job);
  return reply
    .code(202)
    .header('location', `/tasks/${task.task_id}`)
    .header('preference-applied', 'respond-async')
    .header('x-request-id', scope.options.requestId)
    .send(task);
}

function waitOf(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) > MAX_WAIT_MS) throw new InvalidQuery(`wait_ms must be a whole number from 0 to ${MAX_WAIT_MS}`);
  return Number(raw);
}

export async function taskRoutes(app: FastifyInstance, { tasks }: { tasks: TaskRunner }): Promise<void> {
  /** The task if this caller may see it; 404 otherwise, so another key learns nothing of it. */
  async function visible(request: FastifyRequest, id: string): Promise<TaskRecord> {
    const record = await tasks.get(id);
    if (record === null || !TaskRunner.visibleTo(record, request.caller)) throw new NotFound(`no task ${id}`);
    return record;
  }

  const responses = { 200: { description: 'the task', content: { 'application/json': { schema: taskRef } } }, ...problemResponses(400, 404, 503) };

  app.get<{ Params: { id: string }; Querystring: { wait_ms?: string } }>(
    '/tasks/:id',
    {
      schema: {
        summary: 'A task: its status, last progress and, once it has ended, its result or error',
        operationId: 'getTask',
        tags: ['tasks'],
        params: idParams,
        querystring: {
          type: 'object',
          properties: {
            wait_ms: {
              type: 'string',
              pattern: WAIT_PATTERN,
              description: `hold the answer until the task ends, at most this many milliseconds (a whole number from 0 to ${MAX_WAIT_MS})`,
            },
          },
        },
        response: responses,
      },
    },
    async (request) => {
      const waitMs = waitOf(request.query.wait_ms);
      const record = await visible(request, request.params.id);
      if (record.status !== 'working' || waitMs === 0) return viewOf(record);
      return viewOf((await tasks.wait(record.id, waitMs)) ?? record);
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/tasks/:id',
    {
      schema: {
        summary: 'Cancel a task: the handler is aborted on whichever replica runs it; answers the task as it then stands',
        operationId: 'cancelTask',
        tags: ['tasks'],
        params: idParams,
        response: responses,
      },
    },
    async (request) => {
      const record = await visible(request, request.params.id);
      if (record.status === 'working' || record.status === 'input_required') await tasks.cancel(record.id);
      return viewOf((await tasks.get(record.id)) ?? record);
    },
  );

  answerInputRoute(app, tasks, visible, responses);

  app.get<{ Querystring: { cursor?: string; limit?: string } }>(
    '/tasks',
    {
      schema: {
        summary: "The caller's tasks, newest first (admin keys: every task), without their results",
        operationId: 'listTasks',
        tags: ['tasks'],
        querystring: {
          type: 'object',
          properties: {
            cursor: { type: 'string', pattern: TASK_ID.source, description: 'next_cursor of the previous page' },
            limit: { type: 'string', pattern: '^(?:[1-9][0-9]?|100)$', description: `tasks per page, 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE})` },
          },
        },
        response: {
          200: {
            description: 'a page of tasks',
            type: 'object',
            properties: { tasks: { type: 'array', items: taskRef }, next_cursor: { type: ['string', 'null'] } },
            required: ['tasks', 'next_cursor'],
          },
          ...problemResponses(400, 503),
        },
      },
    },
    async (request) => {
      const limit = request.query.limit === undefined ? DEFAULT_PAGE : Number(request.query.limit);
      if (limit < 1 || limit > MAX_PAGE) throw new InvalidQuery(`limit must be from 1 to ${MAX_PAGE}`);
      const caller = request.caller;
      const page = await tasks.list(caller?.admin === true ? 'all' : { owner: caller?.id ?? null }, request.query.cursor ?? null, limit);
      // A listing leaves results out (they can be large): GET the task for its result.
      const listed = page.records.map((record) => {
        const { result: _result, ...rest } = viewOf(record);
        return rest;
      });
      return { tasks: listed, next_cursor: page.next };
    },
  );
}

/** POST /tasks/{id}/input: answers to the task's `input_requests`, by key; the task then runs again with them. */
function answerInputRoute(
  app: FastifyInstance,
  tasks: TaskRunner,
  visible: (request: FastifyRequest, id: string) => Promise<TaskRecord>,
  responses: object,
): void {
  app.post<{ Params: { id: string }; Body: { input_responses: Record<string, unknown> } }>(
    '/tasks/:id/input',
    {
      schema: {
        summary: "Answer a task's input_requests (what its handler asked: context.elicit, context.sample); the task runs again with the answers",
        operationId: 'answerTaskInput',
        tags: ['tasks'],
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['input_responses'],
          properties: {
            input_responses: {
              type: 'object',
              description: 'answers by the keys of input_requests: an elicitation result ({action, content}) or a sampling result ({role, content, model})',
            },
          },
        },
        response: responses,
      },
    },
    async (request) => {
      const record = await visible(request, request.params.id);
      const outstanding = record.status === 'input_required' ? (viewOf(record).input_requests ?? {}) : {};
      const answered = Object.fromEntries(Object.entries(request.body.input_responses).filter(([key]) => Object.hasOwn(outstanding, key)));
      if (Object.keys(answered).length > 0) await tasks.resume(record.id, answered);
      return viewOf((await tasks.get(record.id)) ?? record);
    },
  );
}
