/**
 * The console's call feed (SPEC §13): every finished call, as the dispatcher reports it, becomes a
 * short entry in the store's call log (shared by every replica with Redis), written in small
 * batches off the call's path; open feeds receive each entry live.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Caller } from '../callers/keys.ts';
import { StoreUnavailableError, type CallLog } from '../store/types.ts';
import type { FinishedCall } from '../tools/invoke.ts';

export interface CallEntry {
  /** Unique per entry (call ids are the caller's and may repeat). */
  id: string;
  at: string;
  tool: string;
  /** False when no tool of that name exists for the caller. */
  known: boolean;
  call_id: string;
  parent_call_id: string | null;
  request_id: string;
  session: string | null;
  caller: string | null;
  success: boolean;
  /** `success`, or the error code. */
  outcome: string;
  error_code: string | null;
  duration_ms: number;
  replayed: boolean;
  /** Admin keys only. Cut to a string preview when its JSON is long. */
  arguments?: unknown;
  /** Admin keys only: the ToolResult part of the answer, cut the same way. */
  result?: unknown;
}

/** Longest JSON of arguments or result kept whole in an entry. */
const MAX_PAYLOAD_CHARS = 4000;
const FLUSH_AFTER_MS = 50;
const FLUSH_AT_ENTRIES = 100;

/** The value, or when its JSON is long, that JSON's beginning as a string that says it was cut. */
function preview(value: unknown): unknown {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  if (text === undefined || text.length <= MAX_PAYLOAD_CHARS) return value;
  return `${text.slice(0, MAX_PAYLOAD_CHARS)}… (cut: ${text.length} characters)`;
}

export function entryOf({ at, known, params, result, scope }: FinishedCall): CallEntry {
  const code = result.error?.code ?? null;
  return {
    id: randomUUID(),
    at: new Date(at).toISOString(),
    tool: result.name.slice(0, 128),
    known,
    call_id: result.id.slice(0, 256),
    parent_call_id: scope.parentCallId ?? null,
    request_id: scope.requestId,
    session: scope.sessionId,
    caller: scope.caller,
    success: result.success,
    outcome: code ?? 'success',
    error_code: code,
    duration_ms: result.duration_ms,
    replayed: result.replayed,
    arguments: preview(params),
    result: preview({ message: result.message, value: result.value, error: result.error, idempotency_key: result.idempotency_key }),
  };
}

/**
 * What a caller may see of an entry: everything without API keys or with an admin key; a key
 * without admin sees its own calls only, without arguments and results.
 */
export function entryFor(caller: Caller | null, entry: CallEntry): CallEntry | null {
  if (caller === null || caller.admin) return entry;
  if (entry.caller !== caller.id) return null;
  const { arguments: _arguments, result: _result, ...visible } = entry;
  return visible;
}

export class CallFeed {
  readonly #log: CallLog;
  readonly #logger: Logger;
  #pending: string[] = [];
  #timer: NodeJS.Timeout | null = null;
  #failing = false;
  readonly #listeners = new Set<(entry: CallEntry) => void>();
  #unsubscribe: (() => void) | null = null;

  constructor(log: CallLog, logger: Logger) {
    this.#log = log;
    this.#logger = logger;
  }

  /** The dispatcher's observer: queues the entry; never throws, never waits. */
  readonly observe = (call: FinishedCall): void => {
    try {
      this.#pending.push(JSON.stringify(entryOf(call)));
    } catch (err) {
      this.#logger.warn({ err, callId: call.result.id }, 'a call could not be added to the call feed');
      return;
    }
    if (this.#pending.length >= FLUSH_AT_ENTRIES) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  };

  async flush(): Promise<void> {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    try {
      await this.#log.append(batch);
      this.#failing = false;
    } catch (err) {
      // The feed misses what happened meanwhile. A store outage is logged by the store itself (once);
      // anything else once until a batch goes through again.
      if (!this.#failing && !(err instanceof StoreUnavailableError)) this.#logger.warn({ err: (err as Error).message }, 'the call feed could not record calls');
      this.#failing = true;
    }
  }

  /** The newest entries, newest first. */
  async recent(limit: number): Promise<CallEntry[]> {
    return (await this.#log.recent(limit)).flatMap((text) => parsed(text) ?? []);
  }

  /** Each entry recorded from now on, by any replica; returns the unsubscribe. */
  subscribe(listener: (entry: CallEntry) => void): () => void {
    this.#listeners.add(listener);
    // One store subscription, shared by every open feed of this process.
    this.#unsubscribe ??= this.#log.subscribe((text) => {
      const entry = parsed(text);
      if (entry !== null) for (const each of this.#listeners) each(entry);
    });
    return () => {
      this.#listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    await this.flush();
    this.#unsubscribe?.();
    this.#listeners.clear();
  }
}

function parsed(text: string): CallEntry | null {
  try {
    return JSON.parse(text) as CallEntry;
  } catch {
    return null;
  }
}
