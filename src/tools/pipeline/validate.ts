/** validate: the arguments parsed (when JSON text) and checked against the tool's schema, then frozen. */
import { deepFreeze } from '../../json.ts';
import { explain } from '../explain.ts';
import { failure, reasonOf } from '../outcome.ts';
import { parseArguments } from '../result.ts';
import type { Stage } from './stage.ts';

export function validateStage(): Stage {
  return {
    name: 'validate',
    run(call, next) {
      const { tool, identity } = call;
      let params: unknown;
      try {
        params = call.call.parsed === true ? call.call.arguments : parseArguments(call.call.arguments);
      } catch (err) {
        const [message, detail] = explain.notJson(tool, reasonOf(err));
        return Promise.resolve(failure(identity, 'invalid_arguments', message, detail));
      }
      call.parsed = params;
      if (!tool.validateParams(params)) {
        const [message, detail] = explain.invalid(tool);
        return Promise.resolve(failure(identity, 'invalid_arguments', message, detail));
      }
      call.params = deepFreeze(params) as Readonly<Record<string, unknown>>;
      return next();
    },
  };
}
