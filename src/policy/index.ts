/**
 * Policy and approvals (docs/approvals.md), built once at start: the approvals service (always: its routes
 * answer even with nothing to decide) and the policy stage (only with rules or a tool that asks for
 * approval; otherwise the dispatcher has no stage at all). CEL is loaded only by a file with rules.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { AuditSink } from '../store/audit.ts';
import type { Store } from '../store/types.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { Approvals } from './approvals.ts';
import { PolicyGate } from './gate.ts';
import type { PolicyRule, RawRule } from './rules.ts';
import { ApprovalWebhook } from './webhook.ts';

export interface PolicyParts {
  approvals: Approvals;
  gate: PolicyGate | null;
  close(): void;
}

export async function buildPolicy(options: {
  rules: { file: string; entries: readonly RawRule[] } | null;
  registry: ToolRegistry;
  store: Store;
  config: Config;
  metrics: Metrics;
  log: Logger;
  audit?: AuditSink | null;
}): Promise<PolicyParts> {
  const { config, registry } = options;
  const webhook = config.approvalWebhookUrl === null ? null : new ApprovalWebhook(config.approvalWebhookUrl, config.approvalWebhookSecret, options.log);
  const approvals = new Approvals({
    store: options.store,
    ttlS: config.approvalTtlS,
    maxContentChars: config.maxContentChars,
    metrics: options.metrics,
    log: options.log,
    ...(webhook !== null && { notice: webhook.notify }),
    ...(options.audit != null && { audit: options.audit }),
  });
  let rules: PolicyRule[] = [];
  if (options.rules !== null && options.rules.entries.length > 0) {
    const { compileRules } = await import('./rules.ts');
    rules = compileRules(options.rules.file, options.rules.entries);
  }
  const asked = rules.length > 0 || registry.list().some((tool) => tool.approval !== null);
  if (asked) approvals.startSweep();
  return {
    approvals,
    gate: asked ? new PolicyGate(rules, approvals) : null,
    close: () => {
      approvals.close();
      webhook?.close();
    },
  };
}
