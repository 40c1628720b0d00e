/**
 * The console's call feed: every finished call, as the dispatcher reports it, becomes a short
 * entry in the store's call log (shared by every replica with Redis), appended in small batches
 * off the call's path; open feeds receive each batch live.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Caller } from '../callers/keys.ts';
import { type CallLog, type CallLogEntry } from '../store/types.ts';
import type { FinishedCall } from '../tools/invoke.ts';
import { StoreUnavailable } from '../errors.ts';
import { isoDate, jsonMayExceed, jsonString } from '../json.ts';

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
const MAX_TOOL_CHARS = 128;
const MAX_CALL_ID_CHARS = 256;

/**
 * The value's JSON, or when that is long, its beginning as a JSON string that says it was cut
 * (`null` for nothing; a value that is not JSON says so instead of failing the feed).
 */
function previewJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    return JSON.stringify(`(not JSON: ${(err as Error).message})`);
  }
  if (text === undefined) return 'null';
  if (text.length <= MAX_PAYLOAD_CHARS) return text;
  return JSON.stringify(`${text.slice(0, MAX_PAYLOAD_CHARS)}… (cut: ${text.length} characters)`);
}

/** What a record made here keeps of its call until its entry is built. */
interface Pending {
  at: number;
  known: boolean;
  params: unknown;
  id: string;
  success: boolean;
  code: string | null;
  durationMs: number;
  replayed: boolean;
  /** The result as the entry shows it. */
  shown: { message: string; value: unknown; error: unknown; idempotency_key: string | null };
  parentCallId: string | null;
  requestId: string;
}

/**
 * Entry ids: a random UUID per process whose last 12 hex digits count up — unique across replicas
 * like a UUID, without drawing random bytes per entry.
 */
const ID_PREFIX = randomUUID().slice(0, 24);
let idCount = 0;
const nextId = () => ID_PREFIX + (idCount++ % 0x1000000000000).toString(16).padStart(12, '0');

/**
 * One finished call in the feed. Made on every call, so it only keeps what the call already has:
 * its entry (id, date, previews, JSON text) is built the first time something reads it — a
 * console, GET /calls, or the Redis log, which writes every entry — and then kept, so each
 * entry's JSON is made once however many consoles watch.
 */
export class CallRecord implements CallLogEntry {
  readonly tool: string;
  readonly session: string | null;
  readonly caller: string | null;
  /** What the entry is built from (copied: a call's scope and result hold more); dropped once it is built. */
  #call: Pending | null;
  #head: string | null = null;
  #json: string | null = null;
  #entry: CallEntry | null = null;

  constructor(call: FinishedCall | null, entry?: CallEntry, text?: string) {
    if (call !== null) {
      const name = call.result.name;
      this.tool = name.length > MAX_TOOL_CHARS ? name.slice(0, MAX_TOOL_CHARS) : name;
      this.session = call.scope.sinks.sessionId;
      this.caller = call.scope.caller.id;
      const { result, scope } = call;
      this.#call = {
        at: call.at,
        known: call.known,
        params: call.params,
        id: result.id,
        success: result.success,
        code: result.error?.code ?? null,
        durationMs: result.duration_ms,
        replayed: result.replayed,
        shown: { message: result.message, value: result.value, error: result.error, idempotency_key: result.idempotency_key },
        parentCallId: scope.options.parentCallId ?? null,
        requestId: scope.options.requestId,
      };
    } else {
      this.tool = entry!.tool;
      this.session = entry!.session;
      this.caller = entry!.caller;
      this.#call = null;
      this.#entry = entry!;
      this.#json = text!;
    }
  }

  /** An entry read back as JSON text (from Redis); null when it is not an entry. */
  static parse(text: string): CallRecord | null {
    try {
      const entry = JSON.parse(text) as CallEntry;
      return entry !== null && typeof entry === 'object' && typeof entry.id === 'string' ? new CallRecord(null, entry, text) : null;
    } catch {
      return null;
    }
  }

  /** Everything but arguments and result, as JSON without the closing brace. */
  #headJson(call: Pending): string {
    const { code } = call;
    const callId = call.id.length > MAX_CALL_ID_CHARS ? call.id.slice(0, MAX_CALL_ID_CHARS) : call.id;
    return (
      `{"id":"${nextId()}","at":"${isoDate(call.at)}","tool":${jsonString(this.tool)},"known":${call.known}` +
      `,"call_id":${jsonString(callId)},"parent_call_id":${jsonString(call.parentCallId)},"request_id":${jsonString(call.requestId)}` +
      `,"session":${jsonString(this.session)},"caller":${jsonString(this.caller)},"success":${call.success === true}` +
      `,"outcome":${code === null ? '"success"' : jsonString(code)},"error_code":${jsonString(code)},"duration_ms":${Number.isFinite(call.durationMs) ? call.durationMs : 'null'},"replayed":${call.replayed === true}`
    );
  }

  /** The whole entry as JSON text (arguments and result included). */
  json(): string {
    if (this.#json === null) {
      const call = this.#call!;
      this.#head = this.#headJson(call);
      this.#json = `${this.#head},"arguments":${previewJson(call.params ?? null)},"result":${previewJson(call.shown)}}`;
      this.#call = null;
    }
    return this.#json;
  }

  /**
   * Builds the entry now when the call's arguments or result are large, so what the log keeps of
   * such a call is its previews, not its objects (500 calls of megabyte arguments or results would
   * otherwise be held whole); a small one stays unbuilt until something reads it.
   */
  settle(): void {
    const call = this.#call;
    if (call !== null && (jsonMayExceed(call.params, MAX_PAYLOAD_CHARS) || jsonMayExceed(call.shown, MAX_PAYLOAD_CHARS))) this.json();
  }

  /** The whole entry. */
  entry(): CallEntry {
    this.#entry ??= JSON.parse(this.json()) as CallEntry;
    return this.#entry;
  }

  /** The entry's JSON as `caller` may see it (see entryFor), or null when it may not. */
  jsonFor(caller: Caller | null): string | null {
    if (caller === null || caller.admin) return this.json();
    if (this.caller !== caller.id) return null;
    this.json(); // builds the head of a record made here
    return this.#head === null ? JSON.stringify(entryFor(caller, this.entry())) : `${this.#head}}`;
  }
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

const recordOf = (entry: CallLogEntry): CallRecord | null => (entry instanceof CallRecord ? entry : CallRecord.parse(entry.json()));

/**
 * The dispatcher's calls, queued and appended to the call log in batches off the call's path. On
 * the memory store that is all a call costs while nobody reads the feed; the Redis log serializes
 * and writes every batch (in one command), since any replica may read it.
 */
export class CallFeed {
  readonly #log: CallLog;
  readonly #logger: Logger;
  #pending: CallRecord[] = [];
  #timer: NodeJS.Timeout | null = null;
  #failing = false;
  readonly #listeners = new Set<(records: readonly CallRecord[]) => void>();
  #unsubscribe: (() => void) | null = null;

  constructor(log: CallLog, logger: Logger) {
    this.#log = log;
    this.#logger = logger;
  }

  /** The dispatcher's observer: queues the call; never throws, never waits. */
  readonly observe = (call: FinishedCall): void => {
    this.#pending.push(new CallRecord(call));
    if (this.#pending.length >= FLUSH_AT_ENTRIES) void this.flush();
    else this.#timer ??= setTimeout(this.#flushLater, FLUSH_AFTER_MS);
  };

  readonly #flushLater = (): void => {
    this.#timer = null;
    void this.flush();
  };

  async flush(): Promise<void> {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    for (const record of batch) record.settle();
    try {
      await this.#log.append(batch);
      this.#failing = false;
    } catch (err) {
      // The feed misses what happened meanwhile. A store outage is logged by the store itself (once);
      // anything else once until a batch goes through again.
      if (!this.#failing && !(err instanceof StoreUnavailable)) this.#logger.warn({ err: (err as Error).message }, 'the call feed could not record calls');
      this.#failing = true;
    }
  }

  /** The newest entries, newest first. */
  async recent(limit: number): Promise<CallRecord[]> {
    return (await this.#log.recent(limit)).flatMap((entry) => recordOf(entry) ?? []);
  }

  /** Each batch of entries recorded from now on, by any replica; returns the unsubscribe. */
  subscribe(listener: (records: readonly CallRecord[]) => void): () => void {
    const own = (records: readonly CallRecord[]) => listener(records);
    this.#listeners.add(own);
    // One log subscription, shared by every open feed of this process, and dropped with the last.
    this.#unsubscribe ??= this.#log.subscribe((entries) => {
      const records = entries.flatMap((entry) => recordOf(entry) ?? []);
      if (records.length > 0) for (const each of this.#listeners) each(records);
    });
    return () => {
      this.#listeners.delete(own);
      if (this.#listeners.size === 0 && this.#unsubscribe !== null) {
        this.#unsubscribe();
        this.#unsubscribe = null;
      }
    };
  }

  async close(): Promise<void> {
    await this.flush();
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#listeners.clear();
  }
}
