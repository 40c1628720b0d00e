/** Policy rules (docs/approvals.md): compiled once, a bad one named at start, conditions over args, tool, caller and session. */
import { describe, expect, it } from 'vitest';
import { compileRules } from '../../src/policy/rules.ts';
import { PolicyGate } from '../../src/policy/gate.ts';
import type { Approvals } from '../../src/policy/approvals.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { pluginSource } from '../../src/tools/source.ts';
import { ok } from '../../src/tools/define.ts';

const file = '/etc/toolport/tools.yaml';
const compile = (...rules: unknown[]) =>
  compileRules(
    file,
    rules.map((value, i) => ({ where: `policy[${i}]`, value })),
  );

function gateOf(...rules: unknown[]) {
  const registry = new ToolRegistry();
  const own = registry.of(pluginSource('payments.ts'));
  own.registerTool({
    name: 'pay',
    description: 'Pay.',
    parameters: { type: 'object', properties: { amount: { type: 'number' }, to: { type: 'object' } } },
    annotations: { destructive: true },
    handler: () => ok(null),
  });
  own.registerTool({
    name: 'asked',
    description: 'Asks.',
    parameters: { type: 'object', properties: {} },
    approval: { approvers: ['finance'], ttl_s: 60 },
    handler: () => ok(null),
  });
  const gate = new PolicyGate(compile(...rules), {} as Approvals);
  const match = (
    name: string,
    args: Record<string, unknown>,
    principal: { id: string; groups?: string[]; admin?: boolean } | null = null,
    session: string | null = null,
  ) =>
    gate.match(
      registry.get(name)!,
      args,
      principal === null ? null : { user: null, scopes: [], groups: [], admin: false, ...principal },
      principal?.id ?? null,
      session,
    );
  return match;
}

describe('policy rules', () => {
  it('stops the start naming the rule whose condition does not compile or names an unknown variable', () => {
    expect(() => compile({ action: 'allow' }, { action: 'deny', when: 'args.amount >' })).toThrow(`TOOLS_FILE ${file}: policy[1]: when does not compile`);
    expect(() => compile({ action: 'deny', when: 'user.admin' })).toThrow(/policy\[0\]: when does not compile: Unknown variable: user/);
    expect(() => compile({ action: 'deny', when: '1 + 2' })).toThrow(/policy\[0\]: when must be true or false/);
    expect(() => compile({ action: 'maybe' })).toThrow(/policy\[0\]: action must be one of allow, deny, approve/);
    expect(() => compile({ action: 'deny', approvers: ['x'] })).toThrow(/policy\[0\]: approvers and ttl_s belong to action: approve/);
    expect(() => compile({ action: 'deny', tool: ['x'] })).toThrow(/policy\[0\]: unknown key "tool"/);
  });

  it('compares JSON numbers with integer and double literals alike', () => {
    const match = gateOf({ tools: ['pay'], when: 'args.amount > 1000', action: 'approve' }, { tools: ['pay'], when: 'args.amount == 7.0', action: 'deny' });
    expect(match('pay', { amount: 1500 })?.index).toBe(0);
    expect(match('pay', { amount: 1500.5 })?.index).toBe(0);
    expect(match('pay', { amount: 7 })?.index).toBe(1);
    expect(match('pay', { amount: 999 })).toBeNull();
  });

  it('does not match a condition that fails at run time (a missing field), and goes on to the next rule', () => {
    const match = gateOf({ when: 'args.to.iban.startsWith("DE")', action: 'deny' }, { tools: ['pay'], action: 'allow' });
    expect(match('pay', {})?.index).toBe(1);
    expect(match('pay', { to: { iban: 'DE12' } })?.index).toBe(0);
  });

  it('sees the tool, the caller and the session; the first matching rule wins; globs select tools', () => {
    const match = gateOf(
      { tools: ['p*'], when: "tool.annotations.destructive && !('ops' in caller.groups)", action: 'deny' },
      { when: 'session == null', action: 'approve' },
      { when: 'caller.admin', action: 'allow' },
    );
    expect(match('pay', {}, { id: 'agent' })?.index).toBe(0);
    expect(match('pay', {}, { id: 'o', groups: ['ops'] })?.index).toBe(1);
    expect(match('pay', {}, { id: 'o', groups: ['ops'], admin: true }, 's1')?.index).toBe(2);
    expect(match('pay', {}, { id: 'o', groups: ['ops'] }, 's1')).toBeNull();
  });

  it("sees where the tool comes from as tool.source's kind and name, the way GET /sources names it", () => {
    const match = gateOf(
      { when: "tool.source.kind == 'mcp'", action: 'deny' },
      { when: "tool.source.kind == 'plugin' && tool.source.name == 'payments.ts' && tool.name == 'pay'", action: 'approve' },
    );
    expect(match('pay', {})?.index).toBe(1);
    expect(match('asked', {})?.index).toBe(null);
  });

  it("places a tool's own approval: after the file's rules", () => {
    const match = gateOf({ tools: ['asked'], when: 'caller.admin', action: 'allow' });
    expect(match('asked', {}, { id: 'root', admin: true })?.action).toBe('allow');
    expect(match('asked', {}, { id: 'agent' })).toMatchObject({ index: null, action: 'approve', approvers: ['finance'], ttlS: 60 });
  });
});
