/**
 * Tasks that wait for a connection run again once it is made: a task whose call answered
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

/** The credential an `input_required` task waits for, or null. */
function awaitedCredential(input: string | null): string | null {
  if (input === null) return null;
  const { authorization } = JSON.parse(input) as TaskInput;
  return isObject(authorization) && typeof authorization.credential === 'string' ? authorization.credential : null;
}

/** Resumes the owner's tasks waiting for `name`; how many were resumed. `owner` is the vault's ('anonymous': an open service). */
export async function resumeTasksWaitingFor(tasks: Pick<TaskRunner, 'list' | 'resume'>, owner: string, name: string, log: Logger): Promise<number> {
  let resumed = 0;
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { records, next } = await tasks.list({ owner: owner === 'anonymous' ? null : owner }, after, PAGE);
    for (const record of records) {
      if (record.status === 'input_required' && awaitedCredential(record.input) === name && (await tasks.resume(record.id))) resumed++;
    }
    if (next === null) break;
    after = next;
  }
  if (resumed > 0) log.info({ credential: name, owner, tasks: resumed }, 'tasks waiting for this connection run again');
  return resumed;
}
