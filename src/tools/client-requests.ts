/**
 * What a handler asks of the caller's client and tells it (docs/plugins.md): `context.log` (MCP
 * `notifications/message`), `context.elicit` (`elicitation/create`) and `context.sample`
 * (`sampling/createMessage`). How the question travels depends on who calls: inside the call's
 * answer stream (a live client), by running the call again with the answers (a task, an MCP
 * 2026-07-28 client: `input_required`), or not at all (`input_unavailable`).
 */
import type { Logger } from 'pino';
import { InputRequired, ToolFailure } from './failure.ts';
import type { ClientChannel, ClientMethod, ElicitRequest, LogLevel, ToolLog } from './client-types.ts';

export { LOG_LEVELS } from './client-types.ts';
export type { ClientChannel, ClientMethod, ElicitRequest, ElicitResult, LogLevel, SampleRequest, SampleResult, ToolLog } from './client-types.ts';

/** The pino method a client log level is also written with. */
const PINO_LEVEL: Record<LogLevel, 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'fatal',
  alert: 'fatal',
  emergency: 'fatal',
};

/** The MCP `elicitation/create` params of `context.elicit`'s request. */
export function elicitationParams(request: ElicitRequest): Record<string, unknown> {
  if ('url' in request) return { mode: 'url', message: request.message, url: request.url, elicitationId: crypto.randomUUID() };
  return { mode: 'form', message: request.message, requestedSchema: request.schema };
}

/** A callable logger over `logger`: `log(level, message, data?)` writes to pino and tells the client. */
export function toolLog(logger: Logger, client: ClientChannel | null, tool: string): ToolLog {
  const log = (level: LogLevel, message: string, data?: unknown): void => {
    const method = PINO_LEVEL[level] ?? 'info';
    if (data === undefined) logger[method]({ clientLevel: level }, message);
    else logger[method]({ clientLevel: level, data }, message);
    client?.log(level, message, data, tool);
  };
  // The logger's methods (info, warn, child, …) stay where handlers call them.
  return Object.setPrototypeOf(log, logger) as ToolLog;
}

/** Where a call's questions go and which answers it already has. */
export interface AskingCall {
  client: ClientChannel | null;
  /** Answers from a run before this one (a task resumed, an MCP retry), keyed as asked. */
  answers: Readonly<Record<string, unknown>> | undefined;
  /** A task: asked by holding it in `input_required`. */
  inTask: boolean;
  tool: string;
}

/** The `n`-th question of a call: answered before, asked live, asked by `input_required`, or `input_unavailable`. */
export async function askClient(call: AskingCall, n: number, method: ClientMethod, params: Record<string, unknown>): Promise<unknown> {
  const key = `${method === 'elicitation/create' ? 'elicit' : 'sample'}_${n}`;
  const answered = call.answers?.[key];
  if (answered !== undefined) return answered;
  const reach = call.inTask ? 'resume' : call.client === null ? 'none' : await call.client.reach(method, params);
  if (reach === 'live') return call.client!.ask(method, params);
  if (reach === 'resume') throw new InputRequired({ [key]: { method, params } });
  const what = method === 'elicitation/create' ? 'ask the user' : 'ask the client for a model completion (sampling)';
  throw new ToolFailure(
    'input_unavailable',
    `${call.tool} needs to ${what}, and this caller cannot answer: call it from an MCP client that declares ${method === 'elicitation/create' ? 'elicitation' : 'sampling'}, or as a task.`,
    `the caller cannot answer ${method}`,
  );
}
