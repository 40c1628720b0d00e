/**
 * The dispatcher: the front of the call pipeline (./pipeline/) for every protocol. Every
 * tool-level failure is a result, never a throw; only a store that cannot be reached escapes, as
 * StoreUnavailable (503 at the HTTP edge), and the Idempotency-Key conflicts (409, 422).
 */
import type { NestedCalls, CallContext } from './context.ts';
import { randomUUID } from 'node:crypto';
import { failure, type InvocationResult } from './outcome.ts';
import {
  composeStages,
  PipelineCall,
  pipelineStages,
  type CallEnvironment,
  type InvocationScope,
  type PipelineOptions,
  type RunKey,
  type ToolCall,
} from './pipeline/index.ts';
import type { ToolRegistry } from './registry.ts';
import type { NestedResult } from './types.ts';

export { OPEN_CALLER } from './pipeline/index.ts';
export type { CallerIdentity, CallOptions, CallSinks, FinishedCall, InvocationScope, RunKey, ToolCall, ToolsetRef } from './pipeline/index.ts';
export type DispatcherOptions = PipelineOptions;

const MAX_NESTING = 8;

export class Dispatcher implements NestedCalls<InvocationScope> {
  readonly registry: ToolRegistry;
  readonly #run: (call: PipelineCall) => Promise<InvocationResult>;
  readonly #environment: CallEnvironment;

  constructor(options: PipelineOptions) {
    this.registry = options.registry;
    this.#run = composeStages(pipelineStages(options));
    this.#environment = { resources: options.registry.resources, calls: this };
  }

  invoke(call: ToolCall, scope: InvocationScope): Promise<InvocationResult> {
    return this.#run(new PipelineCall(call, scope, this.#environment));
  }

  /** A handler's `context.invoke`: the same pipeline, under the parent's deadline and cancellation. */
  async nested(name: string, params: Record<string, unknown>, parent: CallContext, scope: InvocationScope): Promise<NestedResult> {
    const result = await this.nestedCall(name, params, parent, scope);
    return { success: result.success, message: result.message, value: result.value, error: result.error };
  }

  nestedCall(name: string, params: Record<string, unknown>, parent: CallContext, scope: InvocationScope, runKey?: RunKey): Promise<InvocationResult> {
    const depth = (scope.options.depth ?? 0) + 1;
    const now = Date.now();
    if (depth > MAX_NESTING) {
      const identity = { id: `call_${randomUUID()}`, name, toolHash: null, startedAt: performance.now() };
      return Promise.resolve(failure(identity, 'handler_error', `Nested tool calls are limited to ${MAX_NESTING} levels.`, 'nesting limit reached'));
    }
    return this.invoke(
      { id: null, name, arguments: params, ...(runKey !== undefined && { runKey }) },
      {
        ...scope,
        options: {
          ...scope.options,
          timeoutMs: Math.max(0, parent.deadline - now),
          receivedAt: now,
          cancellation: parent.ended,
          parentCallId: parent.callId,
          depth,
        },
      },
    );
  }
}
