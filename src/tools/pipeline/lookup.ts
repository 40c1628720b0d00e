/** lookup: the tool of that name, if the caller may call it; anything else is an unknown tool. */
import { explain } from '../explain.ts';
import { failure } from '../outcome.ts';
import type { ToolRegistry } from '../registry.ts';
import type { Stage } from './stage.ts';

export function lookupStage(registry: ToolRegistry): Stage {
  return {
    name: 'lookup',
    run(call, next) {
      const name = call.call.name;
      const allows = call.scope.options.allows;
      const tool = allows === undefined || allows(name) ? registry.get(name) : undefined;
      if (tool === undefined) {
        const visible = registry.list().filter((t) => allows === undefined || allows(t.name));
        const [message, detail] = explain.unknownTool(
          name,
          visible.map((t) => t.name),
        );
        return Promise.resolve(failure(call.identity, 'unknown_tool', message, detail));
      }
      call.tool = tool;
      call.identity.toolHash = tool.hash;
      return next();
    },
  };
}
