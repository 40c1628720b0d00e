/**
 * Tasks that wait for a connection or an approval run again once it is there. Connections: a task whose call answered
 * `authorization_required` waits in `input_required` with that link; when its owner connects the
 * credential (the provider's callback, the secret's form, or PUT /me/credentials), every such task
 * of that owner is put back in the queue, on any replica. Connecting is rare: the owner's tasks
 * are read page by page, newest first, a bounded number of them.
 */
import type { Logger } from 'pino';
import { isObject } from '../json.ts';
import type { TaskRunner } from './runner.ts';
import type { TaskInput } from './view.ts';

const PAGE = 100;
/** At most this many of the owner's newest tasks are looked at per connection. */
const MAX_PAGES = 10;

/** What an `input_required` task waits for, or null. */
function awaited(input: string | null): TaskInput | null {
  return input === null ? null : (JSON.parse(input) as TaskInput);
}

/** The credential an `input_required` task waits for, or null. */
function awaitedCredential(input: TaskInput | null): string | null {
  const authorization = input?.authorization;
  return isObject(authorization) && typeof authorization.credential === 'string' ? authorization.credential : null;
}

/** The approval an `input_required` task waits for, or null. */
function awaitedApproval(input: TaskInput | null): string | null {
  const approval = input?.approval;
  return isObject(approval) && typeof approval.id === 'string' ? approval.id : null;
}

/** Resumes the owner's `input_required` tasks whose input `matches` (null owner: every task); how many were resumed. */
async function resumeWaiting(tasks: Pick<TaskRunner, 'list' | 'resume'>, owner: string | null, matches: (input: TaskInput | null) => boolean): Promise<number> {
  let resumed = 0;
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { records, next } = await tasks.list({ owner }, after, PAGE);
    for (const record of records) {
      if (record.status === 'input_required' && matches(awaited(record.input)) && (await tasks.resume(record.id))) resumed++;
    }
    if (next === null) break;
    after = next;
  }
  return resumed;
}

/** Resumes the owner's tasks waiting for `name`; how many were resumed. `owner` is the vault's ('anonymous': an open service). */
export async function resumeTasksWaitingFor(tasks: Pick<TaskRunner, 'list' | 'resume'>, owner: string, name: string, log: Logger): Promise<number> {
  const resumed = await resumeWaiting(tasks, owner === 'anonymous' ? null : owner, (input) => awaitedCredential(input) === name);
  if (resumed > 0) log.info({ credential: name, owner, tasks: resumed }, 'tasks waiting for this connection run again');
  return resumed;
}

/** Where answers come from: connections made (the vault) and approvals decided or expired. */
export interface AnswerSources {
  vault: { onStored(listener: (owner: string, name: string) => Promise<unknown>): void } | null;
  approvals: { onOutcome(listener: (record: { approval_id: string; caller: string | null }) => void): void };
}

/**
 * Tasks waiting in `input_required` run again, on any replica, once what they wait for is there: a
 * connection of their owner's, or the outcome of their approval (the run then executes the approved
 * call once, or ends with approval_denied / approval_expired).
 */
export function resumeWaitingTasks(tasks: Pick<TaskRunner, 'list' | 'resume'>, sources: AnswerSources, log: Logger): void {
  sources.vault?.onStored((owner, name) => resumeTasksWaitingFor(tasks, owner, name, log));
  sources.approvals.onOutcome(({ approval_id: id, caller }) => {
    resumeWaiting(tasks, caller, (input) => awaitedApproval(input) === id).then(
      (resumed) => resumed > 0 && log.info({ approval: id, tasks: resumed }, 'tasks waiting for this approval run again'),
      (err: unknown) => log.warn({ err, approval: id }, 'could not resume the tasks waiting for an approval'),
    );
  });
}
