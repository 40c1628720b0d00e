/** What one run of a task is made of: the scope its calls run in, its lease kept alive, and how its answer ends the task. */
import type { Logger } from 'pino';
import { problemOf } from '../errors.ts';
import type { EndStatus, LapseOutcomes, TaskStore } from '../store/tasks.ts';
import type { Cancellation } from '../tools/context.ts';
import type { InvocationScope } from '../tools/invoke.ts';
import type { ProgressThrottle } from '../tools/progress.ts';
import type { TaskAccess, TaskError, TaskJob, TaskOutcome } from './view.ts';

export const CANCELLED = JSON.stringify({ error: { code: 'cancelled', detail: 'the task was cancelled' } });

export function lapseOutcomes(maxAttempts: number): LapseOutcomes {
  return {
    lost: JSON.stringify({
      error: {
        code: 'worker_lost',
        detail: 'the replica running this task stopped before it finished; the tool has no idempotency strategy, so it was not run again',
      },
    }),
    exhausted: JSON.stringify({
      error: {
        code: 'worker_lost',
        detail: `the task was attempted ${maxAttempts} times and each time the replica running it stopped before it finished; it is not run again`,
      },
    }),
    cancelled: CANCELLED,
  };
}

/** How a finished run ends the task: cancelled, failed at its deadline or on an unknown outcome, or completed with its result. */
export function outcomeOf(body: object, cancelRequested: boolean): [EndStatus, TaskOutcome] {
  const results = ('results' in body ? body.results : [body]) as { error: TaskError | null }[];
  if (cancelRequested && results.some((r) => r.error?.code === 'cancelled')) {
    return ['cancelled', { error: { code: 'cancelled', detail: 'the task was cancelled before it finished' } }];
  }
  for (const code of ['deadline_exceeded', 'outcome_unknown']) {
    // An earlier run was lost and nobody knows how it ended: the task cannot say it completed.
    if (results.every((r) => r.error?.code === code)) return ['failed', { error: { code, detail: results[0]!.error!.detail } }];
  }
  return ['completed', { result: body }];
}

export function errorOf(err: unknown): TaskError {
  const problem = problemOf(err);
  return { code: problem.type.slice(problem.type.lastIndexOf(':') + 1).replaceAll('-', '_'), detail: problem.detail };
}

/** A running task as its lease renewal sees it: released once another replica has it, cancelled when asked. */
export interface RunState {
  readonly cancellation: Cancellation;
  released: boolean;
}

/** Renews the run's lease every third of its term; a cancel asked for, or a lease lost, aborts the run. */
export function renewLease(store: TaskStore, id: string, replica: string, leaseMs: number, run: RunState, log: Logger): NodeJS.Timeout {
  return setInterval(
    () => {
      store.renew(id, replica, leaseMs).then(
        (state) => {
          if (state === 'ok') return;
          if (state === 'lost') run.released = true;
          run.cancellation.cancel(new Error(state === 'cancel' ? 'the task was cancelled' : 'the task is no longer run here'));
        },
        (err: unknown) => log.warn({ err, task: id }, 'could not renew the lease of a task'),
      );
    },
    Math.max(20, leaseMs / 3),
  );
}

/** The scope the task's calls run in: its caller and access, its deadline, its cancellation and progress. */
export function scopeOfRun(
  id: string,
  job: TaskJob,
  access: TaskAccess,
  defaultTimeoutMs: number,
  log: Logger,
  cancellation: Cancellation,
  throttle: ProgressThrottle,
): InvocationScope {
  return {
    caller: { id: job.caller, principal: access.principal, user: job.user ?? null, presented: null },
    options: {
      requestId: job.requestId,
      format: job.format,
      ...(access.allows !== undefined && { allows: access.allows }),
      timeoutMs: job.timeoutMs,
      defaultTimeoutMs: job.timeoutMs ?? defaultTimeoutMs,
      receivedAt: job.receivedAt,
      cancellation,
      taskId: id,
      ...(job.inputResponses !== undefined && { inputResponses: job.inputResponses }),
    },
    sinks: {
      sessionId: job.sessionId,
      ...(job.sessionSource !== undefined && { sessionSource: job.sessionSource }),
      progress: (_callId, done, total) => throttle.report(done, total),
      log: log.child({ task: id }),
    },
  };
}
