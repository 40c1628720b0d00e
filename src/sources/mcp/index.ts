/**
 * The `mcp:` section of TOOLS_FILE (docs/mcp-sources.md): every server started (in parallel) and its tools
 * in the catalog before the service listens. A server that cannot be reached at start is retried
 * in the background; its tools join when it answers, and /readyz names it meanwhile.
 */
import type { RawEntry } from '../entry.ts';
import type { SourceContext } from '../types.ts';
import { readMcpEntry } from './config.ts';

export async function registerMcpSources(entries: readonly RawEntry[], context: SourceContext): Promise<void> {
  if (entries.length === 0) return;
  const configs = entries.map((entry) => readMcpEntry(entry, context.file, context.credentials));
  // The MCP SDK (and its zod and AJV) loads only for a file with MCP servers: it triples the start time.
  const { McpSource } = await import('./source.ts');
  // Servers over HTTP share the app's connection pool; taken before the sources' close is registered,
  // so the pool closes after them (closers run newest first) and no open stream holds its close.
  const http = configs.some((config) => config.server.kind === 'http') ? (await import('../upstream/shared.ts')).upstreamClient(context).dispatcher : null;
  const sources = configs.map(
    (config) =>
      new McpSource(config, {
        registry: context.registry,
        store: context.store,
        provenance: context.provenance,
        log: context.log,
        version: context.version,
        http,
      }),
  );
  context.onClose(() => Promise.all(sources.map((source) => source.close())).then(() => undefined));
  context.reportUpstreams(() => sources.map((source) => source.status()));
  context.provenance.onAccepted((name) => {
    for (const source of sources) source.accepted(name);
  });
  // A tool that cannot join the catalog (a name clash) stops the start; a server that is down does not.
  const started = await Promise.allSettled(sources.map((source) => source.upstream.start()));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}
