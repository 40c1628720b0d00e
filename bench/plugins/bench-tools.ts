// Tool plugin loaded by toolport via TOOL_PLUGINS during the benchmark.
// Plain objects on purpose: the harness must not depend on the service's own types.
export default [
  {
    name: 'echo',
    description: 'Echo the text back (benchmark tool).',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    handler: async (params: { text: string }) => ({
      message: 'echoed',
      value: { text: params.text },
      success: true,
      exclude_value_from_context: false,
    }),
  },
  {
    name: 'echo_isolated',
    description: 'Echo the text back from a worker thread (benchmark tool for isolated handlers).',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    isolation: 'worker',
    handler: async (params: { text: string }) => ({
      message: 'echoed',
      value: { text: params.text },
      success: true,
      exclude_value_from_context: false,
    }),
  },
  {
    name: 'wait_50ms',
    description: 'Wait 50 ms, then answer (benchmark tool for whole turns).',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    handler: async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { message: 'waited', value: null, success: true, exclude_value_from_context: false };
    },
  },
  {
    name: 'echo_once',
    description: 'Echo the text back, once per text (benchmark tool for the effect ledger).',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    // A short TTL keeps the miss run's records from piling up in the throwaway Redis.
    idempotency: { strategy: 'auto', scope: 'global', ttl_s: 300 },
    handler: async (params: { text: string }) => ({
      message: 'echoed',
      value: { text: params.text },
      success: true,
      exclude_value_from_context: false,
    }),
  },
];
