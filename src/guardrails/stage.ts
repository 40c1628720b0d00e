/**
 * The guardrail stage (docs/guardrails.md), in two places of the pipeline: its input half right
 * after validation (a denied call asks no one for approval and never reaches its handler), its
 * output half right before the handler, so a result is redacted before the session event and the
 * ledger record are written. Built only when a rule or a plugin guardrail exists.
 */
import type { Logger } from 'pino';
import { StoreUnavailable } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import type { ResultKeeper, ResultRef } from '../store/results.ts';
import type { GuardrailCall, GuardrailVerdict } from '../tools/guardrail.ts';
import { failure, reasonOf, type GuardrailAction, type InvocationResult } from '../tools/outcome.ts';
import type { PipelineCall, Stage } from '../tools/pipeline/index.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import { wholeIfCut } from '../tools/render.ts';
import { annotateSpan } from '../tracing/index.ts';
import { applyPattern, redactedParts, redactResult, redactValue, type Checked } from './apply.ts';
import type { Guard, GuardWhere } from './rules.ts';

interface ToolGuards {
  readonly input: readonly Guard[];
  readonly output: readonly Guard[];
}

/** What one half of the stage decided: a denial (by whom, why), or the checked thing, maybe changed. */
type Outcome<T> = { denied: { name: string; reason: string } } | { denied: null; value: T };

export class Guardrails {
  readonly #guards: readonly Guard[];
  readonly #metrics: Metrics | undefined;
  /** Keeps the redacted whole of a cut result (docs/large-results.md). */
  readonly #results: ResultKeeper | undefined;
  readonly #byTool = new WeakMap<RegisteredTool, ToolGuards>();
  readonly input: Stage = { name: 'guardrails input', run: (call, next) => this.#input(call, next) };
  readonly output: Stage = { name: 'guardrails output', run: (call, next) => this.#output(call, next) };

  constructor(guards: readonly Guard[], options: { metrics?: Metrics; results?: ResultKeeper } = {}) {
    this.#guards = guards;
    this.#metrics = options.metrics;
    this.#results = options.results;
  }

  #of(tool: RegisteredTool): ToolGuards {
    let found = this.#byTool.get(tool);
    if (found === undefined) {
      const mine = this.#guards.filter((guard) => guard.matchesTool(tool.name));
      found = {
        input: mine.filter((g) => (g.kind === 'pattern' ? g.input : g.definition.input !== undefined)),
        output: mine.filter((g) => (g.kind === 'pattern' ? g.output : g.definition.output !== undefined)),
      };
      this.#byTool.set(tool, found);
    }
    return found;
  }

  async #input(call: PipelineCall, next: () => Promise<InvocationResult>): Promise<InvocationResult> {
    const guards = this.#of(call.tool).input;
    if (guards.length === 0) return next();
    const actions: GuardrailAction[] = [];
    const checked = await this.#check(guards, 'input', call, call.params as unknown, actions, (guard, args, about) =>
      guard.definition.input!(args as Readonly<Record<string, unknown>>, about),
    );
    if (actions.length > 0) {
      call.guardrails = actions;
      annotateGuardrails(actions);
    }
    if (checked.denied !== null) return this.#deny(call, checked.denied, 'input', actions);
    // What the handler, the session event, the call feed and the audit log see from here on.
    if (checked.value !== call.params) call.params = call.parsed = Object.freeze(checked.value) as Readonly<Record<string, unknown>>;
    const result = await next();
    // A replay or a refusal before the handler: the output half did not run to say what was done.
    return actions.length > 0 && result.guardrails === undefined ? { ...result, guardrails: actions } : result;
  }

  async #output(call: PipelineCall, next: () => Promise<InvocationResult>): Promise<InvocationResult> {
    const guards = this.#of(call.tool).output;
    const before = call.guardrails;
    if (guards.length === 0) {
      const result = await next();
      return before === null ? result : { ...result, guardrails: before };
    }
    let result = await next();
    // Results are copied, never changed in place: a replayed or recorded one may be shared.
    const actions: GuardrailAction[] = before === null ? [] : [...before];
    const shown = { message: result.message, value: result.value };
    const checked = await this.#check(guards, 'output', call, shown, actions, (guard, output, about) =>
      guard.definition.output!(output as typeof shown, about),
    );
    annotateGuardrails(actions);
    if (checked.denied !== null) return this.#deny(call, checked.denied, 'output', actions);
    if (checked.value !== shown) result = await this.#redacted(call, result, checked.value);
    return actions.length > 0 ? { ...result, guardrails: actions } : result;
  }

  /**
   * The result redacted. A cut result's whole was kept as the handler returned it: the redacted whole
   * is kept instead and the result points at it (nothing when the store cannot keep it: no leak).
   */
  async #redacted(call: PipelineCall, result: InvocationResult, shown: { message: string; value: unknown }): Promise<InvocationResult> {
    const parts = redactedParts(result, shown, call.tool.maxContentChars);
    let kept: ResultRef | null = null;
    const whole = result.result_ref === undefined || this.#results === undefined ? null : wholeIfCut(parts.text, this.#results.maxContentChars);
    if (whole !== null) {
      const { scope, identity } = call;
      kept = await this.#results!.keep({ caller: scope.caller.id, tool: identity.name, callId: identity.id, content: whole }).catch((err: unknown) =>
        err instanceof StoreUnavailable ? null : Promise.reject(err),
      );
    }
    return redactResult(result, parts, kept);
  }

  /** Runs each guard in order on `subject` (each sees what the one before left); stops at a denial. */
  async #check<T>(
    guards: readonly Guard[],
    where: GuardWhere,
    call: PipelineCall,
    subject: T,
    actions: GuardrailAction[],
    runPlugin: (guard: Extract<Guard, { kind: 'plugin' }>, subject: T, about: GuardrailCall) => GuardrailVerdict | Promise<GuardrailVerdict>,
  ): Promise<Outcome<T>> {
    let value = subject;
    let about: GuardrailCall | null = null;
    for (const guard of guards) {
      let checked: Checked<T>;
      if (guard.kind === 'pattern') checked = applyPattern(guard, value);
      else {
        about ??= { tool: call.tool.name, caller: call.scope.caller.id };
        checked = await runCustom(guard.name, () => runPlugin(guard, value, about!), call.scope.sinks.log, where, value);
      }
      if (checked.action === null) continue;
      actions.push({ name: guard.name, action: checked.action, where });
      if (checked.action === 'deny') return { denied: { name: guard.name, reason: checked.reason } };
      if (checked.action === 'redact') value = checked.value;
    }
    return { denied: null, value };
  }

  #deny(call: PipelineCall, denied: { name: string; reason: string }, where: GuardWhere, actions: GuardrailAction[]): InvocationResult {
    const { identity, scope } = call;
    this.#metrics?.guardrailDenied(denied.name);
    scope.sinks.log.info({ event: 'GuardrailDenied', tool: identity.name, callId: identity.id, guardrail: denied.name, where }, 'call denied by a guardrail');
    const what = where === 'input' ? 'arguments' : 'result';
    const message = `The guardrail "${denied.name}" refused this call's ${what}: ${denied.reason}`;
    const result = failure(identity, 'guardrail_denied', message, `guardrail ${denied.name} denies the ${what}`);
    result.guardrails = actions;
    return result;
  }
}

/** A plugin's check; one that throws denies (a guardrail that cannot decide must not let the call pass). */
async function runCustom<T>(
  name: string,
  run: () => GuardrailVerdict | Promise<GuardrailVerdict>,
  log: Logger,
  where: GuardWhere,
  subject: T,
): Promise<Checked<T>> {
  let verdict: GuardrailVerdict;
  try {
    verdict = await run();
  } catch (err) {
    log.warn({ err, guardrail: name, where }, 'a guardrail failed: the call is denied');
    return { action: 'deny', reason: `the guardrail failed (${reasonOf(err)})` };
  }
  if (verdict === null || verdict === undefined) return { action: null };
  if (verdict.action === 'redact') return { action: 'redact', value: redactValue(subject, verdict.value, where) };
  if (verdict.action === 'deny') return { action: 'deny', reason: verdict.reason ?? 'no reason given' };
  return { action: 'flag' };
}

/** Puts what the guardrails did on the call's span (the stages run inside it). */
export function annotateGuardrails(actions: readonly GuardrailAction[]): void {
  if (actions.length > 0) annotateSpan({ 'toolport.guardrails': actions.map((a) => `${a.name}:${a.action}:${a.where}`).join(',') });
}
