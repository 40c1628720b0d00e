// A plugin in plain JavaScript: a definition is a plain object; the helpers are optional.
import { ok } from 'toolport';

export default {
  name: 'clock_now',
  description: 'The current time, in UTC, as ISO 8601.',
  parameters: { type: 'object', properties: {} },
  annotations: { read_only: true },
  handler: () => {
    const now = new Date().toISOString();
    return ok({ now }, `It is ${now} (UTC).`);
  },
};
