/** The scope of a request's calls (src/tools/pipeline/call.ts): built once, by concern, never written to by the pipeline. */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { answered } from '../../src/formats/answer.ts';
import { Dispatcher, type FinishedCall, type InvocationScope } from '../../src/tools/invoke.ts';
import type { Stage } from '../../src/tools/pipeline/index.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { pluginSource } from '../../src/tools/source.ts';

const passing = (name: string): Stage => ({ name, run: (_call, next) => next() });

function dispatcher(seen: FinishedCall[]): Dispatcher {
  const registry = new ToolRegistry();
  const tools = registry.of(pluginSource('scope-test.ts'));
  tools.registerTool({
    name: 'inner',
    description: 'Answers who called it.',
    parameters: { type: 'object', properties: {} },
    handler: (_params, context) => ({ message: `called by ${context.caller ?? 'nobody'}`, value: null }),
  });
  tools.registerTool({
    name: 'outer',
    description: 'Calls inner.',
    parameters: { type: 'object', properties: {} },
    handler: async (_params, context) => {
      const inner = await context.invoke('inner', {});
      return { message: inner.message, value: null };
    },
  });
  return new Dispatcher({
    registry,
    defaultTimeoutMs: 5000,
    store: { assertAvailable: () => {} },
    ledger: passing('ledger'),
    session: { ...passing('session'), record: async (_call, result) => result },
    onCall: (call) => seen.push(call),
  });
}

function requestScope(): InvocationScope {
  return {
    caller: { id: 'agent', principal: null, user: null, presented: null },
    options: { requestId: 'req-1', format: 'native', timeoutMs: 2000, receivedAt: Date.now(), cancellation: null },
    sinks: { sessionId: null, log: pino({ level: 'silent' }) },
  };
}

describe('the scope of a call', () => {
  it('carries who calls one way, to the handler and to its nested calls', async () => {
    const seen: FinishedCall[] = [];
    const result = answered(await dispatcher(seen).invoke({ id: 'c1', name: 'outer', arguments: {} }, requestScope()), 1000);
    expect(result.content).toBe('called by agent');
    expect(seen.map((call) => [call.result.name, call.scope.caller.id])).toEqual([
      ['inner', 'agent'],
      ['outer', 'agent'],
    ]);
  });

  it('gives a nested call a scope of its own and leaves the request’s as it was built', async () => {
    const seen: FinishedCall[] = [];
    const scope = requestScope();
    const before = { caller: { ...scope.caller }, options: { ...scope.options }, sinks: { ...scope.sinks } };
    await dispatcher(seen).invoke({ id: 'c1', name: 'outer', arguments: {} }, scope);
    expect(scope).toEqual(before);
    const [inner, outer] = seen;
    expect(outer!.scope).toBe(scope);
    expect(inner!.scope).not.toBe(scope);
    expect(inner!.scope.caller).toBe(scope.caller);
    expect(inner!.scope.options).toMatchObject({ requestId: 'req-1', depth: 1, parentCallId: outer!.result.id });
  });
});
