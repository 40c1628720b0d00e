/**
 * The HTTP surface, in the order it must be registered: the hooks every route relies on (405s first,
 * so it sees every route after it; then body limits, the shared answers, callers, the toolset, the
 * OpenAPI document), then one module per resource.
 */
import type { FastifyInstance } from 'fastify';
import type { CallFeed } from '../calls/feed.ts';
import type { Config } from '../config.ts';
import { mcpApprovalOptions } from '../mcp/client-approval.ts';
import { auditAdmin } from '../http/audit-admin.ts';
import { authentication } from '../http/auth.ts';
import type { EventLoopGuard } from '../http/event-loop.ts';
import { methodAnswers } from '../http/methods.ts';
import { openApiDocument } from '../http/openapi.ts';
import { routeAnswers } from '../http/route-answers.ts';
import { toolsetHeader } from '../http/toolset.ts';
import { approvalRoutes } from '../routes/approvals.ts';
import { auditRoutes } from '../routes/audit.ts';
import { callRoutes } from '../routes/calls.ts';
import { callerRoutes } from '../routes/caller.ts';
import { connectionRoutes } from '../routes/connections.ts';
import { consoleRoutes } from '../routes/console.ts';
import { healthRoutes } from '../routes/health.ts';
import { invokeRoutes } from '../routes/invoke.ts';
import { ledgerRoutes } from '../routes/ledger.ts';
import { ledgerUnknownRoutes } from '../routes/ledger-unknown.ts';
import { mcpRoutes } from '../routes/mcp.ts';
import { metricsRoutes } from '../routes/metrics.ts';
import { provenanceRoutes } from '../routes/provenance.ts';
import { resourceMetadataRoutes } from '../routes/resource-metadata.ts';
import { resultRoutes } from '../routes/results.ts';
import { searchRoutes } from '../routes/search.ts';
import { sessionRoutes } from '../routes/sessions.ts';
import { taskRoutes } from '../routes/tasks.ts';
import { toolRoutes } from '../routes/tools.ts';
import type { TaskRunner } from '../tasks/runner.ts';
import type { Dispatcher } from '../tools/invoke.ts';
import type { Services } from './services.ts';

export interface RouteParts extends Services {
  readonly config: Config;
  readonly version: string;
  readonly dispatcher: Dispatcher;
  readonly tasks: TaskRunner;
  readonly feed: CallFeed;
  readonly loop: EventLoopGuard;
}

export async function registerRoutes(app: FastifyInstance, parts: RouteParts): Promise<void> {
  const { config, version, keys, store, registry, provenance, toolsets, sources, dispatcher, tasks, results, policy } = parts;
  await app.register(methodAnswers);
  await app.register(routeAnswers);
  await app.register(authentication, { keys, tokens: parts.tokens, publicUrl: config.publicUrl, rateCounter: store.rateCounter });
  await app.register(toolsetHeader, { toolsets });
  if (parts.audit !== null) await app.register(auditAdmin, { audit: parts.audit });
  await app.register(openApiDocument, { version, registry, keysConfigured: keys !== null });
  if (config.authIssuer !== null && config.publicUrl !== null) {
    await app.register(resourceMetadataRoutes, { publicUrl: config.publicUrl, issuer: config.authIssuer, scopes: keys!.access.scopes() });
  }
  await app.register(healthRoutes, {
    store,
    upstreams: () => sources?.upstreamStatus() ?? [],
    readyRequiresUpstreams: config.readyRequiresUpstreams,
    loop: parts.loop,
  });
  await app.register(toolRoutes, { registry, provenance, toolsets });
  await app.register(searchRoutes, { search: parts.search });
  await app.register(provenanceRoutes, { provenance });
  await app.register(invokeRoutes, { dispatcher, tasks, maxContentChars: config.maxContentChars });
  await app.register(taskRoutes, { tasks });
  await app.register(sessionRoutes, { store });
  await app.register(metricsRoutes, { metrics: parts.metrics });
  await app.register(ledgerRoutes, { ledger: store.ledger });
  await app.register(ledgerUnknownRoutes, { ledger: store.ledger, toolOf: (name) => registry.get(name) });
  await app.register(mcpRoutes, {
    dispatcher,
    registry,
    version,
    maxContentChars: config.maxContentChars,
    metrics: parts.metrics,
    tasks,
    results,
    taskInlineMs: config.mcpTaskInlineMs,
    ...mcpApprovalOptions(policy.approvals, store.mcpClients, config.sessionTtlS),
    sessions: { store: store.mcpClients, ttlMs: config.sessionTtlS * 1000 },
  });
  await app.register(callRoutes, { feed: parts.feed });
  await app.register(callerRoutes, { keysRequired: keys !== null });
  await app.register(consoleRoutes);
  await app.register(resultRoutes, { results });
  await app.register(connectionRoutes, { vault: parts.vault, publicUrl: config.publicUrl ?? '' });
  await app.register(auditRoutes, { log: store.audit });
  await app.register(approvalRoutes, { approvals: policy.approvals, registry, keysConfigured: keys !== null });
}
