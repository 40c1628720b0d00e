// Tasks (long-running calls): the caller's tasks, refreshed while shown, with cancel. Shown only when
// this toolport serves GET /tasks.
import { problemText, request } from './api.js';
import { add, clockTime, h, notice } from './dom.js';

const POLL_MS = 2000;
const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** Whether the service has tasks: GET /tasks answers (a 404 means it has none). */
export async function hasTasks() {
  const answer = await request('/tasks?limit=1');
  return answer.status !== 404 && answer.status !== 405;
}

export function createTasksPage(section, { tasksAvailable }) {
  if (!tasksAvailable) {
    add(section, notice('This toolport does not run tasks (GET /tasks is not served).'));
    return { enter() {} };
  }
  const status = h('p', { class: 'muted small', role: 'status' });
  const body = h('tbody', {});
  add(
    section,
    status,
    h(
      'div',
      { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Tasks' },
      h(
        'table',
        { class: 'calls' },
        h('caption', { class: 'visually-hidden' }, 'Tasks, newest first'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Task', 'Tool', 'Status', 'Progress', 'Created', 'Updated', 'Action'].map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        body,
      ),
    ),
  );
  let timer = null;

  async function refresh() {
    const answer = await request('/tasks?limit=100');
    if (!answer.ok) {
      status.textContent = problemText(answer);
      return;
    }
    const tasks = answer.data.tasks ?? answer.data.items ?? [];
    status.textContent = `${tasks.length} task${tasks.length === 1 ? '' : 's'} · updated ${clockTime(new Date().toISOString())}`;
    body.replaceChildren(...tasks.map(taskRow));
  }

  function taskRow(task) {
    const progress = task.progress ? `${task.progress.done}${task.progress.total != null ? ` / ${task.progress.total}` : ''}` : '';
    const cancel = ENDED.has(task.status)
      ? ''
      : h(
          'button',
          {
            type: 'button',
            class: 'small danger',
            'aria-label': `Cancel task ${task.task_id}`,
            onclick: async () => {
              const answer = await request(`/tasks/${encodeURIComponent(task.task_id)}`, { method: 'DELETE' });
              status.textContent = answer.ok ? `Task ${task.task_id} cancelled.` : problemText(answer);
              void refresh();
            },
          },
          'Cancel',
        );
    return h(
      'tr',
      { 'data-task': task.task_id },
      h('td', {}, h('code', {}, task.task_id)),
      h('td', {}, task.tool ?? ''),
      h('td', {}, h('span', { class: `badge ${task.status === 'completed' ? 'ok' : task.status === 'working' ? 'warn' : 'bad'}` }, task.status)),
      h('td', {}, progress),
      h('td', {}, clockTime(task.created_at)),
      h('td', {}, clockTime(task.updated_at)),
      h('td', {}, cancel),
    );
  }

  return {
    enter() {
      clearInterval(timer);
      timer = setInterval(() => void refresh(), POLL_MS);
      void refresh();
    },
    leave() {
      clearInterval(timer);
    },
  };
}
