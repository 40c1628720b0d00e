/**
 * The one boundary of an isolated handler: a ToolContext carried across to a worker thread as
 * messages. A function cannot cross, so the worker's context (WorkerContext) turns each call of
 * the context into a message, and the main thread's CallBridge answers it with the call's real
 * context:
 *
 *   task (main → worker, by the pool)   the arguments and the context's data: ids, deadline, user…
 *   progress, beat, log (worker → main)  told, not answered
 *   request (worker → main)              invoke, session get/getMany/set/delete, credentials.get;
 *                                        answered on a port the worker hands over with its first one
 *   abort                                the call ended (deadline, cancellation): the pool aborts the
 *                                        task, which terminates the worker — a synchronous loop hears
 *                                        no signal, so termination is the only abort that always works
 *                                        (a caller gone: after a grace, ./pool.ts; ./call-slots.ts)
 *
 * Worker → main messages go on the worker's parentPort, the task's result on the pool's own port:
 * the task result says how many messages the worker sent, and the bridge waits for them all before
 * answering, so a progress report or a log line never lands after the result.
 */
import { MessageChannel, type MessagePort, type TransferListItem } from 'node:worker_threads';
import { pino } from 'pino';
import type { ElicitRequest, LogLevel, SampleRequest, ToolLog } from '../client-types.ts';
import type { Credentials, NestedResult, Resources, SessionHandle, ToolContext, UserIdentity } from '../types.ts';
import { errorData, reviveError, type ErrorData } from './error-data.ts';

export { errorData, reviveError, type ErrorData };

/** What the pool posts to run one handler. */
export interface CallTask {
  seq: number;
  /** The plugin module (a file URL or package specifier) the worker imports. */
  module: string;
  /** The tool whose handler runs, as the module defines it; or `export`: a function the module exports by that name. */
  tool?: string;
  export?: string;
  params: unknown;
  context: ContextData;
}

/** The data of a ToolContext (everything that is not a function). */
export interface ContextData {
  callId: string;
  toolName: string;
  requestId: string;
  idempotencyKey: string | null;
  deadline: number;
  caller: string | null;
  user: UserIdentity | null;
  sessionId: string | null;
  logLevel: string;
}

export type RequestMethod = 'invoke' | 'session.get' | 'session.getMany' | 'session.set' | 'session.delete' | 'credentials.get' | 'elicit' | 'sample' | 'log';

/** Worker → main, on parentPort. */
export type WorkerMessage =
  | { seq: number; op: 'progress'; done: number; total: number | undefined }
  | { seq: number; op: 'beat' }
  | { seq: number; op: 'log'; line: string }
  | { seq: number; op: 'request'; id: number; method: RequestMethod; args: unknown[]; port?: MessagePort };

/** Main → worker, on the call's port. */
export type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ErrorData };

/** The task's result: what the handler returned or threw, and how many messages the worker sent before. */
export type TaskOutcome = { sent: number; returned: unknown } | { sent: number; threw: ErrorData };

export function contextData(context: ToolContext, logLevel: string): ContextData {
  return {
    callId: context.callId,
    toolName: context.toolName,
    requestId: context.requestId,
    idempotencyKey: context.idempotencyKey,
    deadline: context.deadline,
    caller: context.caller,
    user: context.user,
    sessionId: context.session?.id ?? null,
    logLevel,
  };
}

const LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/**
 * The main side of one isolated call: answers the worker's messages with the call's context. Made
 * per call; what most calls never send (requests) costs nothing until sent.
 */
export class CallBridge {
  readonly #context: ToolContext;
  #port: MessagePort | null = null;
  #received = 0;
  #expected = -1;
  #whenAll: (() => void) | null = null;
  #closed = false;

  constructor(context: ToolContext) {
    this.#context = context;
  }

  receive(message: WorkerMessage): void {
    if (this.#closed) return;
    this.#received++;
    const context = this.#context;
    switch (message.op) {
      case 'progress':
        context.progress(message.done, message.total);
        break;
      case 'beat':
        context.beat();
        break;
      case 'log':
        this.#log(message.line);
        break;
      case 'request':
        if (message.port !== undefined) this.#port = message.port;
        this.#answer(message.id, message.method, message.args);
        break;
    }
    if (this.#whenAll !== null && this.#received >= this.#expected) this.#whenAll();
  }

  /** Resolves once the `sent` messages the worker reports have all arrived (at once for most calls: none). */
  settled(sent: number): Promise<void> | null {
    if (this.#received >= sent) return null;
    this.#expected = sent;
    return new Promise((resolve) => (this.#whenAll = resolve));
  }

  close(): void {
    this.#closed = true;
    this.#port?.close();
    this.#port = null;
    this.#whenAll?.();
  }

  #log(line: string): void {
    try {
      const { level, msg, time: _time, ...fields } = JSON.parse(line) as { level: number; msg?: string; time?: unknown };
      this.#context.log[LEVELS[level] ?? 'info'](fields, msg ?? '');
    } catch {
      this.#context.log.info(line);
    }
  }

  #answer(id: number, method: RequestMethod, args: unknown[]): void {
    this.#run(method, args).then(
      (value) => this.#reply({ id, ok: true, value }),
      (error: unknown) => this.#reply({ id, ok: false, error: errorData(error) }),
    );
  }

  #reply(reply: Reply): void {
    if (this.#closed || this.#port === null) return;
    try {
      this.#port.postMessage(reply);
    } catch (error) {
      this.#port.postMessage({ id: reply.id, ok: false, error: errorData(error) } satisfies Reply);
    }
  }

  #run(method: RequestMethod, args: unknown[]): Promise<unknown> {
    const context = this.#context;
    const session = context.session;
    const key = args[0] as string;
    if (method === 'invoke') return context.invoke(key, args[1] as Record<string, unknown>);
    if (method === 'credentials.get') return context.credentials.get(key);
    if (method === 'elicit') return context.elicit(args[0] as ElicitRequest);
    if (method === 'sample') return context.sample(args[0] as SampleRequest);
    if (method === 'log') return Promise.resolve(context.log(args[0] as LogLevel, args[1] as string, args[2]));
    if (session === null) return Promise.reject(new Error('this call has no session'));
    if (method === 'session.get') return session.get(key);
    if (method === 'session.getMany') return session.getMany(args[0] as string[]);
    if (method === 'session.set') return session.set(key, args[1]);
    return session.delete(key);
  }
}

/** How often at most a worker's `context.beat()` crosses: a loop may beat on every turn. */
const BEAT_INTERVAL_MS = 50;

/**
 * The worker side: the ToolContext an isolated handler sees. `signal` never fires (the call's end
 * terminates the worker); `resources` are those its own module registered in this worker.
 */
export class WorkerContext implements ToolContext {
  readonly callId: string;
  readonly toolName: string;
  readonly requestId: string;
  readonly idempotencyKey: string | null;
  readonly deadline: number;
  readonly caller: string | null;
  readonly user: UserIdentity | null;
  readonly resources: Resources;
  /** Messages sent to the main thread so far. */
  sent = 0;
  readonly #seq: number;
  readonly #data: ContextData;
  readonly #post: (message: WorkerMessage, transfer?: TransferListItem[]) => void;
  #pending: Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }> | null = null;
  #port: MessagePort | null = null;
  #nextId = 0;
  #beatAt = -Infinity;
  #signal: AbortSignal | null = null;
  #log: ToolLog | null = null;
  #session: SessionHandle | null | undefined = undefined;
  #credentials: Credentials | null = null;

  constructor(task: CallTask, resources: Resources, post: (message: WorkerMessage, transfer?: TransferListItem[]) => void) {
    const data = task.context;
    this.#seq = task.seq;
    this.#data = data;
    this.#post = post;
    this.callId = data.callId;
    this.toolName = data.toolName;
    this.requestId = data.requestId;
    this.idempotencyKey = data.idempotencyKey;
    this.deadline = data.deadline;
    this.caller = data.caller;
    this.user = data.user;
    this.resources = resources;
  }

  get session(): SessionHandle | null {
    if (this.#session === undefined) this.#session = this.#data.sessionId === null ? null : this.#sessionHandle(this.#data.sessionId);
    return this.#session;
  }

  get credentials(): Credentials {
    return (this.#credentials ??= { get: (name) => this.#request('credentials.get', [name]) as Promise<string> });
  }

  get signal(): AbortSignal {
    return (this.#signal ??= new AbortController().signal);
  }

  /** pino's lines cross as `log` messages; `log(level, message, data?)` as a request, so the main side tells the client too. */
  get log(): ToolLog {
    if (this.#log !== null) return this.#log;
    const logger = pino({ level: this.#data.logLevel, base: null }, { write: (line: string) => this.#send({ seq: this.#seq, op: 'log', line }) });
    const log = (level: LogLevel, message: string, data?: unknown) => void this.#request('log', [level, message, data]).catch(() => undefined);
    return (this.#log = Object.setPrototypeOf(log, logger) as ToolLog);
  }

  elicit(request: ElicitRequest): ReturnType<ToolContext['elicit']> {
    return this.#request('elicit', [request]) as ReturnType<ToolContext['elicit']>;
  }

  sample(request: SampleRequest): ReturnType<ToolContext['sample']> {
    return this.#request('sample', [request]) as ReturnType<ToolContext['sample']>;
  }

  beat(): void {
    const now = performance.now();
    if (now - this.#beatAt < BEAT_INTERVAL_MS) return;
    this.#beatAt = now;
    this.#send({ seq: this.#seq, op: 'beat' });
  }

  progress(done: number, total?: number): void {
    this.#send({ seq: this.#seq, op: 'progress', done, total });
  }

  invoke(name: string, params: Record<string, unknown>): Promise<NestedResult> {
    return this.#request('invoke', [name, params]) as Promise<NestedResult>;
  }

  /** The handler is done: requests still waiting will not be answered. */
  close(): void {
    if (this.#port === null) return;
    this.#port.close();
    this.#port = null;
    for (const { reject } of this.#pending!.values()) reject(new Error('the call has ended'));
    this.#pending = null;
  }

  #send(message: WorkerMessage, transfer?: TransferListItem[]): void {
    this.sent++;
    this.#post(message, transfer);
  }

  #request(method: RequestMethod, args: unknown[]): Promise<unknown> {
    const id = ++this.#nextId;
    const message: WorkerMessage = { seq: this.#seq, op: 'request', id, method, args };
    let transfer: TransferListItem[] | undefined;
    if (this.#port === null) {
      this.#pending = new Map();
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (reply: Reply) => this.#answered(reply));
      this.#port = port1;
      message.port = port2;
      transfer = [port2];
    }
    return new Promise((resolve, reject) => {
      this.#pending!.set(id, { resolve, reject });
      this.#send(message, transfer);
    });
  }

  #answered(reply: Reply): void {
    const waiting = this.#pending?.get(reply.id);
    if (waiting === undefined) return;
    this.#pending!.delete(reply.id);
    if (reply.ok) waiting.resolve(reply.value);
    else waiting.reject(reviveError(reply.error));
  }

  #sessionHandle(id: string): SessionHandle {
    return Object.freeze({
      id,
      get: <T>(key: string) => this.#request('session.get', [key]) as Promise<T | undefined>,
      getMany: <T>(keys: readonly string[]) => this.#request('session.getMany', [keys]) as Promise<(T | undefined)[]>,
      set: (key: string, value: unknown) => this.#request('session.set', [key, value]) as Promise<void>,
      delete: (key: string) => this.#request('session.delete', [key]) as Promise<void>,
    });
  }
}
