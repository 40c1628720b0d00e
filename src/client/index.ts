/**
 * The typed client: `import { ToolportClient } from 'toolport/client'`. Plain `fetch`, no
 * dependency. A POST that fails to connect or answers 5xx is retried with the same made-up
 * `Idempotency-Key` on every attempt, so the ledger runs an idempotent tool's effect once however
 * many attempts reach the service. Tool-level failures are results (`success: false`); a 4xx
 * problem throws a typed error (./errors.ts).
 */
import { randomUUID } from 'node:crypto';
import { problemError, ToolportUnavailableError, type Problem } from './errors.ts';
import type {
  Approval,
  ApprovalDecision,
  ClientOptions,
  Format,
  InvocationResult,
  InvokeOptions,
  ResultResource,
  Task,
  ToolList,
  TurnResult,
} from './types.ts';

export * from './errors.ts';
export type * from './types.ts';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const MAX_WAIT_MS = 30_000;

interface Request {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  headers?: Record<string, string | undefined>;
}

export class ToolportClient {
  readonly #base: string;
  readonly #apiKey: string | null;
  readonly #retries: number;
  readonly #fetch: typeof fetch;

  constructor(options: ClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey ?? null;
    this.#retries = options.retries ?? 2;
    this.#fetch = options.fetch ?? fetch;
  }

  /** The tools this key may call, rendered for a provider's API (`format`, default native). */
  listTools(options: { format?: Format } = {}): Promise<ToolList> {
    return this.#send<ToolList>({ method: 'GET', path: '/tools', query: { format: options.format } });
  }

  /** Runs one call and answers its result; `success: false` is the tool's own failure, not an exception. */
  invoke(name: string, args: Record<string, unknown> = {}, options: InvokeOptions = {}): Promise<InvocationResult> {
    const body = options.id === undefined ? { name, arguments: args } : { name, arguments: args, id: options.id };
    return this.#send<InvocationResult>({ method: 'POST', path: '/tools/invoke', query: { format: 'native' }, body, headers: headersOf(options) });
  }

  /** Runs a whole assistant turn as the provider produced it; `messages` is what to append to the conversation. */
  invokeTurn(turn: unknown, options: InvokeOptions & { format: Format }): Promise<TurnResult> {
    return this.#send<TurnResult>({ method: 'POST', path: '/tools/invoke', query: { format: options.format }, body: turn, headers: headersOf(options) });
  }

  /** Starts the call as a task (answered at once); follow it with waitTask. */
  startTask(name: string, args: Record<string, unknown> = {}, options: InvokeOptions = {}): Promise<Task> {
    return this.#send<Task>({
      method: 'POST',
      path: '/tools/invoke',
      query: { format: 'native' },
      body: { name, arguments: args },
      headers: { ...headersOf(options), prefer: 'respond-async' },
    });
  }

  /** The task once it has ended, or as it stands when `timeoutMs` (default 60 s) runs out. */
  async waitTask(id: string, options: { timeoutMs?: number } = {}): Promise<Task> {
    const until = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const waitMs = Math.max(0, Math.min(MAX_WAIT_MS, until - Date.now()));
      const task = await this.#send<Task>({ method: 'GET', path: `/tasks/${encodeURIComponent(id)}`, query: { wait_ms: String(waitMs) } });
      if (TERMINAL.has(task.status) || Date.now() >= until) return task;
    }
  }

  /** Approvals this key may decide, and its own requests (default: the pending ones). */
  async listApprovals(options: { status?: Approval['status'] } = {}): Promise<Approval[]> {
    const answer = await this.#send<{ approvals: Approval[] } | Approval[]>({
      method: 'GET',
      path: '/approvals',
      query: { status: options.status ?? 'pending' },
    });
    return Array.isArray(answer) ? answer : answer.approvals;
  }

  /** Approves or denies a held call; `arguments` (approve only) replaces the call's arguments. */
  decide(id: string, decision: ApprovalDecision): Promise<Approval> {
    return this.#send<Approval>({ method: 'POST', path: `/approvals/${encodeURIComponent(id)}/decision`, body: decision });
  }

  /** The whole of a result that was cut: its id, or the `toolport://results/<id>` URI a result_ref names. */
  readResult(id: string): Promise<ResultResource> {
    const bare = id.replace(/^toolport:\/\/results\//, '');
    return this.#send<ResultResource>({ method: 'GET', path: `/results/${encodeURIComponent(bare)}` });
  }

  async #send<T>(request: Request): Promise<T> {
    const url = new URL(this.#base + request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const [name, value] of Object.entries(request.headers ?? {})) if (value !== undefined) headers[name] = value;
    if (this.#apiKey !== null) headers.authorization = `Bearer ${this.#apiKey}`;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    // One key for every attempt: a retried POST that did reach the service replays instead of running again.
    if (request.method === 'POST' && headers['idempotency-key'] === undefined) headers['idempotency-key'] = randomUUID();
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);

    let last: ToolportUnavailableError | null = null;
    for (let attempt = 0; attempt <= this.#retries; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempt - 1)));
      let response: Response;
      try {
        response = await this.#fetch(url, body === undefined ? { method: request.method, headers } : { method: request.method, headers, body });
      } catch (err) {
        last = new ToolportUnavailableError(`toolport at ${this.#base} did not answer: ${causeOf(err)}`, null, { cause: err });
        continue;
      }
      const text = await response.text();
      if (response.status >= 500) {
        last = new ToolportUnavailableError(`toolport at ${this.#base} answered ${response.status}: ${detailOf(text) ?? response.statusText}`, response.status);
        continue;
      }
      if (response.status >= 400) throw problemError(problemOf(response.status, text));
      return (text === '' ? null : JSON.parse(text)) as T;
    }
    throw last!;
  }
}

function headersOf(options: InvokeOptions): Record<string, string | undefined> {
  return {
    'x-session-id': options.sessionId,
    'idempotency-key': options.idempotencyKey,
    'x-timeout-ms': options.timeoutMs === undefined ? undefined : String(options.timeoutMs),
  };
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

function detailOf(text: string): string | null {
  try {
    const parsed = JSON.parse(text) as { detail?: unknown };
    return typeof parsed.detail === 'string' ? parsed.detail : null;
  } catch {
    return null;
  }
}

function problemOf(status: number, text: string): Problem {
  try {
    const parsed = JSON.parse(text) as Partial<Problem>;
    if (typeof parsed === 'object' && parsed !== null) return { ...parsed, status };
  } catch {
    // not JSON: the text itself is the detail
  }
  return { status, title: 'refused', detail: text.slice(0, 500) };
}
