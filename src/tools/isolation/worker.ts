/**
 * The worker thread of an isolated handler (piscina's task function): imports the plugin module
 * itself, finds the handler by its tool's name, and runs it with a WorkerContext (./protocol.ts).
 */
import { parentPort, workerData, type TransferListItem } from 'node:worker_threads';
import { exportedBy, importModule } from '../plugin-module.ts';
import type { Resources, ToolContext, ToolDefinition } from '../types.ts';
import { WorkerSlots } from './call-slots.ts';
import { errorData, WorkerContext, type CallTask, type TaskOutcome, type WorkerMessage } from './protocol.ts';

type Handler = (params: unknown, context: ToolContext) => unknown;

interface LoadedModule {
  handlers: Map<string, Handler>;
  exports: Record<string, unknown>;
  resources: Resources;
}

const modules = new Map<string, Promise<LoadedModule>>();
/** The modules imported so far: a call to one of them starts without waiting for a promise. */
const ready = new Map<string, LoadedModule>();

async function importPlugin(specifier: string): Promise<LoadedModule> {
  const module = (await importModule(specifier)) as Record<string, unknown>;
  const handlers = new Map<string, Handler>();
  const values = new Map<string, unknown>();
  const exported = exportedBy(module);
  const add = (definition: ToolDefinition) => handlers.set(definition.name, definition.handler as Handler);
  if (typeof exported === 'function') {
    await (exported as (registry: unknown) => unknown)({
      registerTool: add,
      registerResource: (key: string, value: unknown) => values.set(key, value),
      registerGuardrail: () => {}, // guardrails run in the main process's pipeline
    });
  } else if (Array.isArray(exported)) exported.forEach(add);
  else if (typeof exported === 'object' && exported !== null) add(exported as ToolDefinition);
  const resources: Resources = Object.freeze({ get: <T>(key: string) => values.get(key) as T | undefined });
  return { handlers, exports: module, resources };
}

function loaded(specifier: string): Promise<LoadedModule> {
  let found = modules.get(specifier);
  if (found === undefined) {
    found = importPlugin(specifier);
    modules.set(specifier, found);
    found.then((module) => ready.set(specifier, module)).catch(() => {});
  }
  return found;
}

function post(message: WorkerMessage, transfer?: TransferListItem[]): void {
  parentPort!.postMessage(message, transfer);
}

const data = workerData as { modules?: string[]; slots?: Int32Array } | null;
const slots = new WorkerSlots(data?.slots ?? null);
// The modules known when the pool started are imported now, before the first call waits for them.
for (const specifier of data?.modules ?? []) loaded(specifier).catch(() => {});

export default async function runIsolatedCall(task: CallTask): Promise<TaskOutcome> {
  let module = ready.get(task.module);
  if (module === undefined) {
    try {
      module = await loaded(task.module);
    } catch (error) {
      return { sent: 0, threw: errorData(error) };
    }
  }
  const handler = task.tool !== undefined ? module.handlers.get(task.tool) : module.exports[task.export ?? 'default'];
  if (typeof handler !== 'function') {
    const what = task.tool !== undefined ? `tool "${task.tool}"` : `export "${task.export}"`;
    return { sent: 0, threw: errorData(new Error(`the worker found no ${what} in ${task.module}`)) };
  }
  // After the import: the handler's run, not its module's import, is what may keep the thread busy.
  if (!slots.start(task.seq)) return { sent: 0, threw: errorData(new Error('the call ended before its handler started')) };
  const context = new WorkerContext(task, module.resources, post);
  try {
    const returned = await (handler as Handler)(task.params, context);
    return { sent: context.sent, returned };
  } catch (error) {
    return { sent: context.sent, threw: errorData(error) };
  } finally {
    context.close();
  }
}
