/**
 * The audit trail (docs/audit.md): what the service did and decided, appended to the store's chain
 * (src/store/audit.ts) in small batches off the call's path, as the call feed is — one round trip
 * per batch — and, with AUDIT_FILE, to a file of JSON lines. A call only queues a small record; its
 * entry (the arguments' hash, the JSON) is made when its batch is written, off the call's path.
 */
import { appendFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { StoreUnavailable } from '../errors.ts';
import { isoDate, jsonString } from '../json.ts';
import { auditJson, type AuditBody, type AuditEvent, type AuditLog, type AuditSink } from '../store/audit.ts';
import { hashJson } from '../tools/hash.ts';
import type { FinishedCall } from '../tools/invoke.ts';

const FLUSH_AFTER_MS = 50;
const FLUSH_AT_ENTRIES = 100;
/** Entries kept for the next try while the store is down; beyond, the oldest are dropped (and counted in the log). */
const MAX_WAITING = 10_000;

export interface AuditTrailOptions {
  /** AUDIT_ARGUMENTS: keep the arguments themselves, not only their hash. */
  arguments: boolean;
  /** AUDIT_FILE: also append each entry there as a JSON line. */
  file: string | null;
  log: Logger;
}

/** One event until its batch is written: its JSON (the arguments' hash included) is made only then, once. */
class QueuedEntry implements AuditBody {
  readonly #at: number;
  /** Let go once the text is made: no call's arguments are held longer than its batch waits. */
  #event: AuditEvent | null;
  readonly #withArguments: boolean;
  #text: string | null = null;

  constructor(at: number, event: AuditEvent, withArguments: boolean) {
    this.#at = at;
    this.#event = event;
    this.#withArguments = withArguments;
  }

  /** The same members in the same order for every kind. */
  text(): string {
    if (this.#text !== null) return this.#text;
    const e = this.#event!;
    const args = e.arguments;
    this.#text =
      `{"at":"${isoDate(this.#at)}","kind":"${e.kind}","caller":${jsonString(e.caller)},"user":${jsonString(e.user)},"on_behalf_of":${jsonString(e.onBehalfOf)}` +
      `,"tool":${jsonString(e.tool)},"tool_hash":${jsonString(e.toolHash)},"arguments_hash":${args == null ? 'null' : `"${hashJson(args)}"`}` +
      `,"approval_id":${jsonString(e.approvalId)},"rule":${jsonString(e.rule)},"outcome":${jsonString(e.outcome)},"call_id":${jsonString(e.callId)}` +
      `,"request_id":${jsonString(e.requestId)},"detail":${jsonString(e.detail)}${this.#withArguments && args !== undefined ? `,"arguments":${JSON.stringify(args)}` : ''}}`;
    this.#event = null;
    return this.#text;
  }
}

export class AuditTrail implements AuditSink {
  readonly #log: AuditLog;
  readonly #options: AuditTrailOptions;
  #pending: QueuedEntry[] = [];
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();
  #failing = false;
  #closed = false;

  constructor(log: AuditLog, options: AuditTrailOptions) {
    this.#log = log;
    this.#options = options;
  }

  record(event: AuditEvent): void {
    this.#pending.push(new QueuedEntry(Date.now(), event, this.#options.arguments));
    if (this.#pending.length >= FLUSH_AT_ENTRIES) void this.flush();
    else this.#timer ??= setTimeout(this.#flushLater, FLUSH_AFTER_MS);
  }

  /** The dispatcher's observer: a call that reached its handler, or one a policy rule or a guardrail stopped. */
  readonly observe = (call: FinishedCall): void => {
    const { result, scope } = call;
    const code = result.error?.code ?? null;
    const kind = call.ran ? 'call' : call.rule !== null ? 'policy' : code === 'guardrail_denied' ? 'guardrail' : null;
    if (kind === null) return;
    this.record({
      kind,
      caller: scope.caller.id,
      user: scope.caller.principal?.user ?? scope.caller.user?.id ?? null,
      tool: result.name,
      toolHash: result.tool_hash,
      arguments: call.params,
      approvalId: result.approval?.id ?? null,
      rule: call.rule,
      outcome: code ?? 'success',
      callId: result.id,
      requestId: scope.options.requestId,
    });
  };

  readonly #flushLater = (): void => {
    this.#timer = null;
    void this.flush();
  };

  /** Writes what is queued; batches go one after the other, so the file keeps the chain's order. */
  flush(): Promise<void> {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    const file = this.#options.file;
    let kept;
    try {
      kept = await this.#log.append(batch, file !== null);
      this.#failing = false;
    } catch (err) {
      this.#keepForLater(batch, err);
      return;
    }
    if (file !== null) {
      const lines = kept.map((entry) => `${auditJson(entry)}\n`).join('');
      await appendFile(file, lines).catch((err: unknown) => this.#options.log.error({ err }, 'audit entries could not be written to AUDIT_FILE'));
    }
  }

  #keepForLater(batch: QueuedEntry[], err: unknown): void {
    for (const entry of batch) entry.text(); // what waits holds its text, not the calls' objects
    this.#pending = batch.concat(this.#pending);
    const over = this.#pending.length - MAX_WAITING;
    if (over > 0) {
      this.#pending.splice(0, over);
      this.#options.log.error({ dropped: over }, 'audit entries were dropped: the store has been unreachable too long');
    }
    if (!this.#failing && !(err instanceof StoreUnavailable)) this.#options.log.warn({ err }, 'audit entries could not be written; retrying');
    this.#failing = true;
    // A closed trail does not retry: what it could not write by then is lost (and logged).
    if (this.#closed) this.#options.log.error({ lost: this.#pending.length }, 'audit entries were lost: the store did not answer before the service closed');
    else this.#timer ??= setTimeout(this.#flushLater, 1000).unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
