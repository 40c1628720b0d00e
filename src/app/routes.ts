/**
 * The HTTP surface, in the order it must be registered: the hooks every route relies on (405s first,
 * so it sees every route after it; then body limits, the shared answers, callers, the toolset, the
 * OpenAPI document), then one module per resource. Each module gets what it uses as options and
 * registers only its own routes (listed in ROUTES).
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
import { connectLinkRoutes } from '../routes/connect-link.ts';
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
import { sourceRoutes } from '../routes/sources.ts';
import { taskRoutes } from '../routes/tasks.ts';
import { toolRoutes } from '../routes/tools.ts';
import type { TaskRunner } from '../tasks/runner.ts';
import type { Dispatcher } from '../tools/invoke.ts';
import type { Services } from './services.ts';

/**
 * Every route the service serves, by the module that registers it (HEAD is added to each GET by
 * Fastify). test/unit/routes.test.ts builds the app and fails on a route registered but not listed
 * here, or listed but not registered.
 */
export const ROUTES = {
  openApiDocument: [
    'GET /openapi.json',
    'GET /docs',
    'GET /docs/',
    'GET /docs/static/index.html',
    'GET /docs/static/swagger-initializer.js',
    'GET /docs/json',
    'GET /docs/yaml',
    'GET /docs/*',
  ],
  /** Only with AUTH_ISSUER and PUBLIC_URL. */
  resourceMetadataRoutes: ['GET /.well-known/oauth-protected-resource', 'GET /.well-known/oauth-protected-resource/mcp'],
  healthRoutes: ['GET /healthz', 'GET /readyz'],
  sourceRoutes: ['GET /sources'],
  toolRoutes: ['GET /tools', 'GET /tools/:name', 'GET /toolsets'],
  searchRoutes: ['GET /tools/search'],
  provenanceRoutes: ['GET /tools/hashes/:hash', 'GET /tools/:name/versions', 'POST /tools/:name/accept'],
  invokeRoutes: ['POST /tools/invoke', 'POST /tools/:name/invoke'],
  taskRoutes: ['GET /tasks', 'GET /tasks/:id', 'DELETE /tasks/:id', 'POST /tasks/:id/input'],
  sessionRoutes: ['GET /sessions/:id/plan', 'GET /sessions/:id/events', 'DELETE /sessions/:id', 'GET /planning/instructions'],
  metricsRoutes: ['GET /metrics'],
  ledgerRoutes: ['GET /ledger/effects/:key', 'DELETE /ledger/effects/:key', 'DELETE /ledger/tools/:name', 'DELETE /ledger'],
  ledgerUnknownRoutes: ['GET /ledger/unknown', 'POST /ledger/effects/:key/resolve'],
  mcpRoutes: ['POST /mcp', 'GET /mcp', 'DELETE /mcp', 'POST /mcp/:toolset', 'GET /mcp/:toolset', 'DELETE /mcp/:toolset'],
  callRoutes: ['GET /calls', 'GET /calls/stream'],
  callerRoutes: ['GET /caller'],
  consoleRoutes: ['GET /console', 'GET /console/:asset'],
  resultRoutes: ['GET /results/:id'],
  connectLinkRoutes: ['GET /connections/:name/start', 'POST /connections/:name/start'],
  connectionRoutes: [
    'GET /connections/:name/callback',
    'POST /connections/:name/callback',
    'GET /me/connections',
    'DELETE /me/connections/:name',
    'POST /me/connections/:name/link',
    'PUT /me/credentials/:name',
  ],
  auditRoutes: ['GET /audit'],
  approvalRoutes: ['GET /approvals', 'GET /approvals/:id', 'POST /approvals/:id/decision'],
} as const satisfies Record<string, readonly string[]>;

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
  const upstreams = () => sources?.upstreamStatus() ?? [];
  await app.register(healthRoutes, { store, upstreams, readyRequiresUpstreams: config.readyRequiresUpstreams, loop: parts.loop });
  await app.register(sourceRoutes, { upstreams, registry });
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
  await app.register(connectLinkRoutes, { vault: parts.vault, publicUrl: config.publicUrl ?? '' });
  await app.register(connectionRoutes, { vault: parts.vault, publicUrl: config.publicUrl ?? '' });
  await app.register(auditRoutes, { log: store.audit });
  await app.register(approvalRoutes, { approvals: policy.approvals, registry, keysConfigured: keys !== null });
}
