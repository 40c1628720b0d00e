/** Idempotent tools for the ledger tests: each counts its handler runs by a tag argument. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { error, ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import type { ToolDefinition } from '../../src/tools/types.ts';

/** Handler runs by `tag` (every test uses its own tags, so counts never mix). */
export const ledgerRuns = new Map<string, number>();
/** Tags whose next runs should fail, and how many times. */
export const failuresLeft = new Map<string, number>();

export function runsOf(tag: string): number {
  return ledgerRuns.get(tag) ?? 0;
}

/** Resolves once the handler for `tag` has started `count` times (so a test knows the lease is taken). */
export async function started(tag: string, count = 1): Promise<void> {
  for (let i = 0; i < 500 && runsOf(tag) < count; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (runsOf(tag) < count) throw new Error(`the handler for ${tag} did not start`);
}

const tagged = { tag: { type: 'string' }, ms: { type: 'integer', minimum: 0 } };

function count(tag: unknown): void {
  ledgerRuns.set(String(tag), runsOf(String(tag)) + 1);
}

/** Runs for `ms`, then answers a fresh id: a replay is recognised by the same id. */
async function charge(params: Record<string, unknown>, signal: AbortSignal) {
  count(params.tag);
  if (typeof params.ms === 'number' && params.ms > 0) await sleep(params.ms, undefined, { signal });
  const left = failuresLeft.get(String(params.tag)) ?? 0;
  if (left > 0) {
    failuresLeft.set(String(params.tag), left - 1);
    return error('The payment provider refused: try again.');
  }
  return ok({ charge_id: randomUUID(), tag: params.tag }, `charged ${String(params.tag)}`);
}

export const ledgerTools: ToolDefinition[] = [
  {
    name: 'charge',
    description: 'Charges once per argument set (auto, session scope).',
    parameters: { type: 'object', properties: { ...tagged, amount: { type: 'integer' } }, required: ['tag'] },
    idempotency: { strategy: 'auto' },
    handler: (params, context) => charge(params, context.signal),
  },
  {
    name: 'charge_global',
    description: 'Charges once per argument set across sessions.',
    parameters: { type: 'object', properties: tagged, required: ['tag'] },
    idempotency: { strategy: 'auto', scope: 'global' },
    handler: (params, context) => charge(params, context.signal),
  },
  {
    name: 'order',
    description: 'Keyed by order_id only.',
    parameters: { type: 'object', properties: { ...tagged, order_id: { type: 'string' }, note: { type: 'string' } }, required: ['tag', 'order_id'] },
    idempotency: { strategy: 'params', param_keys: ['order_id'] },
    handler: (params, context) => charge(params, context.signal),
  },
  {
    name: 'custom_keyed',
    description: 'Keyed by a custom function of the tag only.',
    parameters: { type: 'object', properties: { ...tagged, noise: { type: 'integer' } }, required: ['tag'] },
    idempotency: { strategy: 'custom', key: (params) => `tag=${String(params.tag)}` },
    handler: (params, context) => charge(params, context.signal),
  },
  {
    name: 'short_lived',
    description: 'Recorded for one second.',
    parameters: { type: 'object', properties: tagged, required: ['tag'] },
    idempotency: { strategy: 'auto', ttl_s: 1, scope: 'global' },
    handler: (params, context) => charge(params, context.signal),
  },
  {
    name: 'forever',
    description: 'Recorded without expiry.',
    parameters: { type: 'object', properties: tagged, required: ['tag'] },
    idempotency: { strategy: 'auto', ttl_s: null, scope: 'global' },
    handler: (params, context) => charge(params, context.signal),
  },
  {
    name: 'bump',
    description: 'Increments the session counter once per argument set.',
    parameters: { type: 'object', properties: tagged, required: ['tag'] },
    idempotency: { strategy: 'auto' },
    handler: async (params, context) => {
      count(params.tag);
      const value = ((await context.session?.get<number>('count')) ?? 0) + 1;
      await context.session?.set('count', value);
      return { message: `count is ${value}`, value: { count: value }, exclude_value_from_context: true };
    },
  },
];

export function registerLedgerTools(registry: SourceRegistry): void {
  for (const tool of ledgerTools) registry.registerTool(tool);
}
