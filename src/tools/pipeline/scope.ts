/**
 * scope: the call's deadline (the tool's limit, shortened by the caller's X-Timeout-Ms) and, for a
 * session built-in, the session it runs in (src/tools/session-handle.ts); a call already out of
 * time ends here, and a session call ends with a 503 when the store is known to be down.
 */
import { explain } from '../explain.ts';
import { failure } from '../outcome.ts';
import { chooseSession } from '../session-handle.ts';
import type { Stage } from './stage.ts';

export interface ScopeOptions {
  defaultTimeoutMs: number;
  /** Throws (StoreUnavailable) at once, without a round trip, when the store is known to be down. */
  store: { assertAvailable(): void };
}

export function scopeStage({ defaultTimeoutMs, store }: ScopeOptions): Stage {
  return {
    name: 'scope',
    run(call, next) {
      const tool = call.tool;
      let scope = call.scope;
      // The tool's own limit may be longer than the default; the caller's X-Timeout-Ms can only shorten it.
      const budgetMs = Math.min(scope.options.timeoutMs ?? Infinity, tool.timeoutMs ?? scope.options.defaultTimeoutMs ?? defaultTimeoutMs);
      const deadline = scope.options.receivedAt + budgetMs;
      call.budgetMs = budgetMs;
      call.deadline = deadline;
      if (Date.now() >= deadline) {
        const [message, detail] = explain.deadline(tool, budgetMs);
        return Promise.resolve(failure(call.identity, 'deadline_exceeded', message, detail));
      }
      if (tool.takesSessionHandle) {
        const chosen = chooseSession(scope.sinks.sessionId, scope.sinks.sessionSource, call.params);
        if (chosen.id !== scope.sinks.sessionId || scope.sinks.sessionSource === 'connection')
          call.scope = scope = { ...scope, sinks: { ...scope.sinks, sessionId: chosen.id, sessionSource: 'header' } };
        call.announceSession = chosen.announce;
      }
      if (scope.sinks.sessionId !== null) store.assertAvailable();
      return next();
    },
  };
}
