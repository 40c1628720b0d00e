/**
 * A toolport plugin: a to-do list kept in the caller's session. It shows the three things most
 * plugins need beyond a handler: session state, the effect ledger, and progress for long work.
 */
import { defineTool, error, ok, type ToolDefinition } from 'toolport';

interface Todo {
  id: number;
  title: string;
  done: boolean;
}

/** Session state is JSON under keys of the plugin's choosing; writes commit only if the handler succeeds. */
const TODOS = 'todo:items';

const todoAdd = defineTool<{ title: string }, { todo: Todo; count: number }>({
  name: 'todo_add',
  description: 'Add an item to the to-do list of this session.',
  parameters: {
    type: 'object',
    properties: { title: { type: 'string', minLength: 1, maxLength: 200, description: 'what is to be done' } },
    required: ['title'],
  },
  result: {
    type: 'object',
    properties: { todo: { type: 'object' }, count: { type: 'integer' } },
    required: ['todo', 'count'],
  },
  // The ledger: a retried call with the same title in the same session is answered from the
  // record of the first one, so a flaky network never adds an item twice.
  idempotency: { strategy: 'auto', scope: 'session' },
  annotations: { idempotent: true, destructive: false },
  async handler({ title }, context) {
    if (context.session === null) {
      return error('This tool keeps the list in a session: send the X-Session-Id header (any id of your choice) and call it again.');
    }
    const todos = (await context.session.get<Todo[]>(TODOS)) ?? [];
    const todo: Todo = { id: todos.length + 1, title, done: false };
    await context.session.set(TODOS, [...todos, todo]);
    context.log.info({ todo: todo.id }, 'todo added');
    return ok({ todo, count: todos.length + 1 }, `Added "${title}" as item ${todo.id}; the list has ${todos.length + 1} items.`);
  },
});

const todoList = defineTool<Record<string, never>, { todos: Todo[] }>({
  name: 'todo_list',
  description: 'Show the to-do list of this session.',
  parameters: { type: 'object', properties: {} },
  annotations: { read_only: true },
  async handler(_params, context) {
    const todos = (await context.session?.get<Todo[]>(TODOS)) ?? [];
    if (todos.length === 0) return ok({ todos }, 'The list is empty.');
    return ok({ todos }, todos.map((t) => `${t.id}. [${t.done ? 'x' : ' '}] ${t.title}`).join('\n'));
  },
});

const todoExport = defineTool<{ format: 'markdown' | 'csv' }, { text: string }>({
  name: 'todo_export',
  description: 'Export the to-do list as Markdown or CSV (slow: reports progress).',
  parameters: {
    type: 'object',
    properties: { format: { type: 'string', enum: ['markdown', 'csv'] } },
    required: ['format'],
  },
  timeout_ms: 10_000,
  async handler({ format }, context) {
    const todos = (await context.session?.get<Todo[]>(TODOS)) ?? [];
    const lines: string[] = format === 'csv' ? ['id,title,done'] : [];
    for (const [i, todo] of todos.entries()) {
      // Long work: stop when the call is over (deadline, or the caller went away)…
      context.signal.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, 20));
      lines.push(format === 'csv' ? `${todo.id},"${todo.title.replaceAll('"', '""')}",${todo.done}` : `- [${todo.done ? 'x' : ' '}] ${todo.title}`);
      // …and tell the caller how far it got (MCP progress notifications, SSE `progress` events).
      context.progress(i + 1, todos.length);
    }
    const text = lines.join('\n');
    // The text can be long: the model reads the message; the value goes to the program.
    return { message: `Exported ${todos.length} items as ${format}.`, value: { text }, success: true, exclude_value_from_context: true };
  },
});

const tools: ToolDefinition[] = [todoAdd, todoList, todoExport] as ToolDefinition[];
export default tools;
