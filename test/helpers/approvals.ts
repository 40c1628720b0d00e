/** A service with policy rules: a tools file, API keys (an admin, an agent, a finance approver, a stranger) and a payment tool that counts its runs. */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';

const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');

export interface PolicyFixture {
  env: Record<string, string>;
  keys: { ops: string; agent: string; finance: string; stranger: string };
  /** Runs of each payment tool's handler, and the arguments of the last one. */
  runs: Map<string, number>;
  last: Map<string, unknown>;
  register: (registry: SourceRegistry) => void;
}

export const DEFAULT_RULES = [
  { tools: ['payments_*'], when: 'args.amount > 1000', action: 'approve', approvers: ['finance', 'client'] },
  {
    tools: ['*'],
    when: "tool.annotations.destructive && !('ops' in caller.groups)",
    action: 'deny',
    reason: 'Destructive tools are reserved for the ops team; ask a person.',
  },
];

export async function policyFixture(rules: unknown[] = DEFAULT_RULES, env: Record<string, string> = {}): Promise<PolicyFixture> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolport-policy-'));
  const keys = { ops: `sk-${randomUUID()}`, agent: `sk-${randomUUID()}`, finance: `sk-${randomUUID()}`, stranger: `sk-${randomUUID()}` };
  await writeFile(
    path.join(dir, 'keys.json'),
    JSON.stringify([
      { id: 'ops', key_sha256: sha(keys.ops), tools: ['*'], admin: true },
      { id: 'agent', key_sha256: sha(keys.agent), tools: ['*'] },
      { id: 'finance', key_sha256: sha(keys.finance), tools: [] },
      { id: 'stranger', key_sha256: sha(keys.stranger), tools: ['*'] },
    ]),
  );
  await writeFile(path.join(dir, 'tools.yaml'), stringify({ policy: rules }));
  const runs = new Map<string, number>();
  const last = new Map<string, unknown>();
  const counted = (name: string) => (params: Record<string, unknown>) => {
    runs.set(name, (runs.get(name) ?? 0) + 1);
    last.set(name, params);
    return ok({ refunded: params.amount, order: params.order }, `refunded ${String(params.amount)}`);
  };
  const amount = { type: 'object', properties: { order: { type: 'string' }, amount: { type: 'number', maximum: 100000 } }, required: ['order', 'amount'] };
  const register = (registry: SourceRegistry) => {
    registry.registerTool({ name: 'payments_refund', description: 'Refund an order.', parameters: amount, handler: counted('payments_refund') });
    registry.registerTool({
      name: 'wipe_disk',
      description: 'Wipe a disk.',
      parameters: { type: 'object', properties: {} },
      annotations: { destructive: true },
      handler: counted('wipe_disk'),
    });
    registry.registerTool({
      name: 'send_letter',
      description: 'Send a letter.',
      parameters: amount,
      approval: { approvers: ['finance'] },
      handler: counted('send_letter'),
    });
  };
  return {
    env: { TOOLS_FILE: path.join(dir, 'tools.yaml'), API_KEYS_FILE: path.join(dir, 'keys.json'), ...env },
    keys,
    runs,
    last,
    register,
  };
}
