/**
 * Durable approvals (docs/approvals.md): a held call becomes a record bound to its caller, session, tool hash
 * and arguments hash; identical calls join it; one decision wins; the approved call runs once (a
 * runner's lease in the store) and later identical calls replay its result. Every step is told to
 * the session log, the metric, the span and the webhook.
 */
import { randomUUID } from 'node:crypto';
import type { Metrics } from '../metrics.ts';
import type { AuditSink } from '../store/audit.ts';
import type { ApprovalStatus, ApprovalStore } from '../store/approvals.ts';
import { ownedSessions } from '../store/owned-sessions.ts';
import type { Store } from '../store/types.ts';
import { hashJson } from '../tools/hash.ts';
import { answerAgain, failure, RESULT_TEXT, type CallIdentity, type InvocationResult } from '../tools/outcome.ts';
import { contentOf } from '../tools/render.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import type { Logger } from 'pino';
import type { Principal } from '../callers/principal.ts';
import { annotateSpan } from '../tracing/index.ts';
import { approvalForm, approvalRef, clientDecision, CLIENT_INPUT_KEY, effectiveStatus, type ApprovalRecord } from './record.ts';
import type { PolicyRule } from './rules.ts';

/** A call a rule holds for approval, as the gate needs it. */
export interface HeldCall {
  tool: RegisteredTool;
  params: Readonly<Record<string, unknown>>;
  identity: CallIdentity;
  caller: string | null;
  principal: Principal | null;
  sessionId: string | null;
  /** How long the handler may take: the runner's lease on the approved call. */
  budgetMs: number;
  log: Logger;
  rule: PolicyRule;
  /** Runs as a task: a client approver is asked through the task's input requests, and `answers` (tasks/update) may hold its answer. */
  task?: { answers: Readonly<Record<string, unknown>> | undefined };
}

export interface ApprovalsOptions {
  store: Store;
  /** APPROVAL_TTL_S: how long an approval waits when its rule says nothing, and how long outcomes are kept after. */
  ttlS: number;
  /** MAX_CONTENT_CHARS: an executed call's result is kept as its approval shows it, content rendered. */
  maxContentChars: number;
  metrics?: Metrics;
  log?: Logger;
  /** Told of every new approval and every decision (the webhook); must not throw, must not wait. */
  notice?: (record: ApprovalRecord) => void;
  /** The audit log (docs/audit.md): every decision and expiry. */
  audit?: AuditSink;
}

const LEASE_MARGIN_MS = 5_000;
/** How often every replica looks for approvals past their expiry, and how many it expires per look. */
const SWEEP_MS = 200;
const SWEEP_BATCH = 100;

export class Approvals {
  readonly #store: ApprovalStore;
  readonly #sessions: Store;
  readonly #options: ApprovalsOptions;
  /** Told of every outcome (approved, denied, expired): tasks waiting for it run again. */
  readonly #outcomeListeners: ((record: ApprovalRecord) => void)[] = [];
  /** The shared sweep: records the expiry of undecided approvals on time, whichever replica made them. */
  #sweep: NodeJS.Timeout | null = null;
  #sweeping = false;

  constructor(options: ApprovalsOptions) {
    this.#store = options.store.approvals;
    this.#sessions = options.store;
    this.#options = options;
  }

  /** Calls `listener` with each decision and expiry recorded by this replica. */
  onOutcome(listener: (record: ApprovalRecord) => void): void {
    this.#outcomeListeners.push(listener);
  }

  /** Stops the sweep (the app is closing). */
  close(): void {
    if (this.#sweep !== null) clearInterval(this.#sweep);
    this.#sweep = null;
  }

  /**
   * Every replica that serves approvals sweeps the store's deadlines: an undecided approval is
   * recorded expired (and its waiting task told) on time even if the replica that made it is gone.
   */
  startSweep(): void {
    this.#sweep ??= setInterval(() => void this.#expireDue(), SWEEP_MS).unref();
  }

  async #expireDue(): Promise<void> {
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      for (const id of await this.#store.due(SWEEP_BATCH)) await this.read(id); // reading records the expiry
    } catch {
      // the store is down: a reader (or the next sweep of a deadline not yet handed out) records it
    } finally {
      this.#sweeping = false;
    }
  }

  #outcome(record: ApprovalRecord): void {
    this.#options.notice?.(record);
    this.#options.audit?.record({
      kind: 'approval',
      caller: record.decision?.by ?? null,
      onBehalfOf: record.caller,
      tool: record.tool,
      toolHash: record.tool_hash,
      arguments: record.arguments,
      approvalId: record.approval_id,
      rule: record.rule === null ? 'approval' : `policy[${record.rule}]`,
      outcome: record.status,
      callId: record.call_id,
    });
    for (const listener of this.#outcomeListeners) listener(record);
  }

  get ttlS(): number {
    return this.#options.ttlS;
  }

  /** What binds identical calls: the same caller, session, tool definition and arguments. */
  static binding(caller: string | null, sessionId: string | null, toolHash: string, argumentsHash: string): string {
    return hashJson([caller, sessionId, toolHash, argumentsHash]);
  }

  /**
   * The held call's approval, joined or made: pending answers `approval_required`; approved runs
   * `run` once (with the approved arguments); executed replays; denied or expired answers so and
   * lets the next identical call ask anew.
   */
  async gate(call: HeldCall, run: (params: Readonly<Record<string, unknown>>) => Promise<InvocationResult>): Promise<InvocationResult> {
    const opened = await this.open(call);
    const { binding } = opened;
    let record = opened.record;
    const answer = call.task?.answers?.[CLIENT_INPUT_KEY];
    if (record.status === 'pending' && answer !== undefined) record = await this.decideByClient(record, answer, call.caller);
    annotateSpan({ 'toolport.approval': `${record.approval_id} ${record.status}` });
    switch (record.status) {
      case 'pending':
        return this.#answer(call, record, 'approval_required');
      case 'denied':
      case 'expired':
        await this.#store.release(binding, record.approval_id);
        return this.#answer(call, record, record.status === 'denied' ? 'approval_denied' : 'approval_expired');
      case 'executed':
        this.#options.metrics?.approval('replayed');
        return { ...answerAgain(record.result!), id: call.identity.id, replayed: true, approval: approvalRef(record) };
      case 'approved':
        return this.#runApproved(call, record, run);
    }
  }

  /** The approval of a held call, made (and announced) if none binds it yet, its expiry applied. */
  async open(call: HeldCall): Promise<{ record: ApprovalRecord; binding: string }> {
    const argumentsHash = hashJson(call.params);
    const binding = Approvals.binding(call.caller, call.sessionId, call.tool.hash, argumentsHash);
    const now = Date.now();
    const ttlMs = (call.rule.ttlS ?? this.#options.ttlS) * 1000;
    const fresh: ApprovalRecord = {
      approval_id: randomUUID(),
      status: 'pending',
      tool: call.tool.name,
      tool_hash: call.tool.hash,
      arguments: call.params as Record<string, unknown>,
      arguments_hash: argumentsHash,
      requested_arguments: null,
      caller: call.caller,
      user: call.principal?.user ?? null,
      session_id: call.sessionId,
      call_id: call.identity.id,
      rule: call.rule.index,
      approvers: call.rule.approvers,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + ttlMs).toISOString(),
      decision: null,
      result: null,
    };
    const keepMs = ttlMs + this.#options.ttlS * 1000;
    const opened = await this.#store.open(binding, { id: fresh.approval_id, json: JSON.stringify(fresh), expiresAt: now + ttlMs, keepMs });
    let record = JSON.parse(opened.json) as ApprovalRecord;
    if (opened.created) {
      this.#options.metrics?.approval('requested');
      call.log.info(
        { event: 'ApprovalRequested', approval: record.approval_id, tool: record.tool, callId: record.call_id, rule: record.rule },
        'call held for approval',
      );
      await this.#event(record, 'ApprovalRequested');
      this.#options.notice?.(record);
      this.startSweep();
    }
    record = await this.settle(record);
    return { record, binding };
  }

  /** Reads an approval, recording its expiry if it has lapsed undecided. */
  async read(id: string): Promise<ApprovalRecord | null> {
    const stored = await this.#store.get(id);
    return stored === null ? null : this.settle(JSON.parse(stored.json) as ApprovalRecord);
  }

  /** A pending record past its expiry becomes `expired` (once, by whichever replica sees it first). */
  async settle(record: ApprovalRecord): Promise<ApprovalRecord> {
    if (effectiveStatus(record) !== 'expired' || record.status === 'expired') return record;
    const expired: ApprovalRecord = { ...record, status: 'expired' };
    const moved = await this.#store.move(record.approval_id, 'pending', 'expired', JSON.stringify(expired), 'lapsed');
    if (moved === 'ok') {
      this.#options.metrics?.approval('expired');
      await this.#eventAfter(expired);
      this.#outcome(expired);
      return expired;
    }
    return (await this.read(record.approval_id)) ?? expired;
  }

  /**
   * Records a decision: compare-and-set from pending, so the first one wins on every replica.
   * Answers the new record, or what stood in the way ('decided', 'expired', 'missing').
   */
  async decide(record: ApprovalRecord, decided: ApprovalRecord): Promise<{ record: ApprovalRecord } | { conflict: ApprovalStatus | 'missing' }> {
    const moved = await this.#store.move(record.approval_id, 'pending', decided.status, JSON.stringify(decided), 'live');
    if (moved !== 'ok') {
      if (moved === 'expired') await this.settle(record);
      return { conflict: moved };
    }
    this.#options.metrics?.approval(decided.status === 'approved' ? 'approved' : 'denied');
    await this.#eventAfter(decided);
    this.#outcome(decided);
    return { record: decided };
  }

  /**
   * The person at the caller's own MCP client answered the approval form: decides a pending approval
   * whose approvers include `client`. Answers the record as it then stands.
   */
  async decideByClient(record: ApprovalRecord, answer: unknown, caller: string | null): Promise<ApprovalRecord> {
    if (record.status !== 'pending' || !record.approvers.includes('client') || record.caller !== caller) return record;
    const { approve, note } = clientDecision(answer);
    const decided: ApprovalRecord = {
      ...record,
      status: approve ? 'approved' : 'denied',
      decision: { by: `client:${caller ?? 'anonymous'}`, at: new Date().toISOString(), note, arguments_edited: false },
    };
    const outcome = await this.decide(record, decided);
    return 'record' in outcome ? outcome.record : ((await this.read(record.approval_id)) ?? record); // decided meanwhile: that stands
  }

  /** The newest approvals, expiry applied. */
  async recent(limit: number): Promise<ApprovalRecord[]> {
    const records = (await this.#store.recent(limit)).map((json) => JSON.parse(json) as ApprovalRecord);
    return Promise.all(records.map((record) => this.settle(record)));
  }

  /** The key that seals MCP request states, the same on every replica. */
  sharedSecret(): Promise<string> {
    return this.#store.sharedSecret();
  }

  /** True the first time a sealed request state is used. */
  useOnce(token: string, ttlMs: number): Promise<boolean> {
    return this.#store.useOnce(token, ttlMs);
  }

  async #runApproved(
    call: HeldCall,
    record: ApprovalRecord,
    run: (params: Readonly<Record<string, unknown>>) => Promise<InvocationResult>,
  ): Promise<InvocationResult> {
    const runner = randomUUID();
    if (!(await this.#store.claim(record.approval_id, runner, call.budgetMs + LEASE_MARGIN_MS))) {
      const now = await this.read(record.approval_id);
      if (now?.status === 'executed') return this.gate(call, run); // it finished meanwhile: replay
      const message = `An identical approved call to tool "${call.tool.name}" is running now. Repeat this call in a moment to get its result.`;
      return failure(call.identity, 'in_progress', message, `approval ${record.approval_id} is being run by another call`);
    }
    const result = await run(record.arguments);
    const shown = { ...result, content: contentOf(result[RESULT_TEXT], this.#options.maxContentChars, result.result_ref ?? null) };
    const executed: ApprovalRecord = { ...record, status: 'executed', result: shown };
    if (await this.#store.complete(record.approval_id, runner, JSON.stringify(executed))) this.#options.metrics?.approval('executed');
    return { ...result, approval: approvalRef(executed) };
  }

  #answer(call: HeldCall, record: ApprovalRecord, code: 'approval_required' | 'approval_denied' | 'approval_expired'): InvocationResult {
    const [message, detail] = explainApproval(call.tool, record, code);
    const answer = failure(call.identity, code, message, detail);
    // Only a pending approval rides on the result: a task holds itself in input_required on seeing one.
    if (code !== 'approval_required') return answer;
    const asksClient = call.task !== undefined && record.approvers.includes('client');
    return {
      ...answer,
      approval: approvalRef(record),
      ...(asksClient && { input_requests: { [CLIENT_INPUT_KEY]: { method: 'elicitation/create', params: approvalForm(record, 'form') } } }),
    };
  }

  /** A decision's step in the session's log: the decision already stands, so a store failing now is logged, not answered. */
  async #eventAfter(record: ApprovalRecord): Promise<void> {
    try {
      await this.#event(record, 'ApprovalDecided');
    } catch (err) {
      this.#options.log?.warn({ err, approval: record.approval_id }, 'an approval was decided but its session event was not written');
    }
  }

  /** The step in the session's log (a call without a session has none). */
  async #event(record: ApprovalRecord, type: 'ApprovalRequested' | 'ApprovalDecided'): Promise<void> {
    if (record.session_id === null) return;
    const event = {
      type,
      approval_id: record.approval_id,
      tool: record.tool,
      call_id: record.call_id,
      status: record.status,
      ...(record.decision !== null && { decided_by: record.decision.by, arguments_edited: record.decision.arguments_edited }),
      at: new Date().toISOString(),
      caller: record.caller,
    };
    await ownedSessions(this.#sessions, record.caller).commitSession(record.session_id, { reads: new Map(), writes: new Map(), event: JSON.stringify(event) });
  }
}

/** What the model reads for each outcome, and the detail. */
export function explainApproval(
  tool: RegisteredTool | { name: string },
  record: ApprovalRecord,
  code: 'approval_required' | 'approval_denied' | 'approval_expired',
): [string, string] {
  const id = record.approval_id;
  if (code === 'approval_required') {
    return [
      `The call to tool "${tool.name}" needs a person's approval before it runs (approval ${id}, waiting until ${record.expires_at}). Nothing has run. Tell the user it awaits approval; repeating this same call later returns the outcome.`,
      `approval ${id} is pending`,
    ];
  }
  if (code === 'approval_denied') {
    const note = record.decision?.note;
    return [
      `A person declined the call to tool "${tool.name}" (approval ${id})${note ? `: ${note}` : '.'} Nothing ran. Do not repeat it unchanged.`,
      note ? `denied: ${note}` : `approval ${id} was denied`,
    ];
  }
  return [
    `No one approved the call to tool "${tool.name}" in time (approval ${id} expired at ${record.expires_at}). Nothing ran. Repeating the call asks again.`,
    `approval ${id} expired`,
  ];
}
