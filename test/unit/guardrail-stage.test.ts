/** Where the guardrail stage sits in the pipeline (docs/design.md), and that it is absent when nothing is configured. */
import { describe, expect, it } from 'vitest';
import { Guardrails } from '../../src/guardrails/stage.ts';
import { compileGuards } from '../../src/guardrails/rules.ts';
import { pipelineStages, type PipelineOptions, type Stage } from '../../src/tools/pipeline/index.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';

const passing = (name: string): Stage => ({ name, run: (_call, next) => next() });

function options(guardrails?: Guardrails): PipelineOptions {
  return {
    registry: new ToolRegistry(),
    defaultTimeoutMs: 1000,
    store: { assertAvailable: () => {} },
    ledger: passing('ledger'),
    session: { ...passing('session'), record: async (_call, result) => result },
    ...(guardrails !== undefined && { guardrails }),
  };
}

describe('the guardrail stage in the pipeline', () => {
  it('is not in the list when nothing is configured', () => {
    expect(pipelineStages(options()).map((s) => s.name)).toEqual(['record', 'lookup', 'validate', 'scope', 'ledger', 'session', 'handler']);
  });

  it('checks arguments right after validation and results right before the handler answers', () => {
    const guardrails = new Guardrails(compileGuards('tools.yaml', [{ where: 'guardrails[0]', value: { pattern: 'email', action: 'redact' } }], []));
    expect(pipelineStages(options(guardrails)).map((s) => s.name)).toEqual([
      'record',
      'lookup',
      'validate',
      'guardrails input',
      'scope',
      'ledger',
      'session',
      'guardrails output',
      'handler',
    ]);
  });
});
