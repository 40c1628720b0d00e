/** Introspect tools (docs/plugins-and-sources.md): what the caller may call, and what its session holds. */
import { ownedSessions } from '../store/owned-sessions.ts';
import { readPlan } from '../sessions/planning/plan.ts';
import type { Store } from '../store/types.ts';
import type { Provenance } from '../tools/provenance.ts';
import { CallContext } from '../tools/context.ts';
import { error, ok } from '../tools/define.ts';
import { catalogHash, type SourceRegistry, type ToolRegistry } from '../tools/registry.ts';
import type { ToolDefinition } from '../tools/types.ts';
import { numberedEvents } from '../sessions/events.ts';

const MAX_EVENTS = 100;

export interface IntrospectDeps {
  registry: ToolRegistry;
  store: Store;
  provenance: Provenance;
}

function catalogTool({ registry, provenance }: IntrospectDeps): ToolDefinition {
  return {
    name: 'introspect_catalog',
    description: 'List the tools you may call, with the hash of each definition, its earlier versions, and the catalog hash.',
    parameters: { type: 'object', properties: {} },
    annotations: { read_only: true, destructive: false, idempotent: true, open_world: false },
    handler: async (_params, context) => {
      // What the call may call: its key's tools, inside the toolset it was made in.
      const tools = registry.list().filter((tool) => !(context instanceof CallContext) || context.mayCall(tool.name));
      await provenance.recorded();
      const versions = await Promise.all(tools.map((t) => provenance.versions(t.name)));
      return ok(
        {
          catalog_hash: catalogHash(tools),
          tools: tools.map((t, i) => ({ name: t.name, description: t.description, hash: t.hash, versions: versions[i] })),
        },
        `You may call ${tools.length} tools.`,
      );
    },
  };
}

function sessionTool({ store }: IntrospectDeps): ToolDefinition<{ events?: number }> {
  return {
    name: 'introspect_session',
    description: "Show this session's plan and its most recent tool calls (newest last).",
    parameters: { type: 'object', properties: { events: { type: 'integer', minimum: 1, maximum: MAX_EVENTS } } },
    annotations: { read_only: true, destructive: false, idempotent: true, open_world: false },
    handler: async ({ events: wanted = 20 }, context) => {
      if (context.session === null) return error('This call has no session.'); // unreachable: see src/tools/session-handle.ts
      const id = context.session.id;
      const plan = (await readPlan(context.session)) ?? null;
      const page = await ownedSessions(store, context.caller).sessionEvents(id, 'newest', wanted);
      const events = numberedEvents(page);
      const total = page.total;
      const planText = plan === null ? 'no plan' : `a plan "${plan.objective}" (${plan.status}, ${plan.steps.length} steps)`;
      return ok({ session_id: id, plan, events, events_total: total }, `Session "${id}" has ${planText} and ${total} recorded calls.`);
    },
  };
}

export function registerIntrospectTools(registry: Pick<SourceRegistry, 'registerTool' | 'registerSessionTool'>, deps: IntrospectDeps): void {
  registry.registerTool(catalogTool(deps));
  registry.registerSessionTool(sessionTool(deps) as unknown as ToolDefinition);
}
