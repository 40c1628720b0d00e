/** Tools that behave well and badly, for the dispatch tests. */
import { setTimeout as sleep } from 'node:timers/promises';
import { error, ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import type { ToolDefinition } from '../../src/tools/types.ts';

/** How many times each test tool's handler ran, by name (tests read and reset it). */
export const runs = new Map<string, number>();

/** Call ids whose signal fired, with the time it fired (for the cancellation tests). */
export const aborted = new Map<string, number>();

/** Call ids of watch_abort handlers that started, with the time (tests wait for it instead of sleeping). */
export const started = new Map<string, number>();

function counted(definition: ToolDefinition): ToolDefinition {
  return {
    ...definition,
    handler: (params, context) => {
      runs.set(definition.name, (runs.get(definition.name) ?? 0) + 1);
      return definition.handler(params, context);
    },
  };
}

const noArgs = { type: 'object', properties: {} };

export const testTools: ToolDefinition[] = [
  {
    name: 'echo',
    description: 'Echo the text back.',
    parameters: { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } }, required: ['text'] },
    handler: (params) => ok({ text: params.text }, 'echoed'),
  },
  {
    name: 'slow',
    description: 'Wait some milliseconds, honouring the abort signal.',
    parameters: { type: 'object', properties: { ms: { type: 'integer', minimum: 0 }, tag: { type: 'string' } }, required: ['ms'] },
    handler: async (params, context) => {
      await sleep(params.ms as number, undefined, { signal: context.signal });
      return ok({ tag: params.tag ?? null, waited: params.ms }, 'done');
    },
  },
  { name: 'hang', description: 'Never answers.', parameters: noArgs, handler: () => new Promise(() => {}) },
  {
    name: 'watch_abort',
    description: 'Never answers, and notes when its signal fires.',
    parameters: noArgs,
    handler: (_params, context) => {
      context.signal.addEventListener('abort', () => aborted.set(context.callId, Date.now()));
      started.set(context.callId, Date.now());
      return new Promise(() => {});
    },
  },
  {
    name: 'capped',
    description: 'Has its own 50 ms limit and takes 5 s.',
    parameters: noArgs,
    timeout_ms: 50,
    handler: async () => {
      await sleep(5000);
      return ok(null, 'too late');
    },
  },
  {
    name: 'blocks',
    description: 'Blocks the event loop for some milliseconds, then answers.',
    parameters: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
    handler: (params) => {
      const until = Date.now() + (params.ms as number);
      while (Date.now() < until);
      return ok(null, 'finally');
    },
  },
  {
    name: 'throws',
    description: 'Throws an Error.',
    parameters: noArgs,
    handler: () => {
      throw new Error('database exploded at /srv/secret/path.js');
    },
  },
  {
    name: 'throws_value',
    description: 'Throws something that is not an Error.',
    parameters: noArgs,
    handler: () => {
      throw {
        toString: () => {
          throw new Error('nope');
        },
      };
    },
  },
  { name: 'not_a_result', description: 'Returns a number.', parameters: noArgs, handler: () => 42 as never },
  {
    name: 'breaks_result',
    description: 'Returns a value its result schema refuses.',
    parameters: noArgs,
    result: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    handler: () => ok({ n: 'not a number' }),
  },
  {
    name: 'unserializable',
    description: 'Returns a value with no JSON form.',
    parameters: noArgs,
    handler: () => ok({ big: 10n }),
  },
  { name: 'fails', description: 'Reports a failure itself.', parameters: noArgs, handler: () => error('Nothing found: try another query.') },
  {
    name: 'big',
    description: 'Returns a long string.',
    parameters: { type: 'object', properties: { size: { type: 'integer' } }, required: ['size'] },
    handler: (params) => ok({ text: 'x'.repeat(params.size as number) }, 'big'),
  },
  {
    name: 'secret',
    description: 'Keeps its value out of the model context.',
    parameters: noArgs,
    handler: () => ({ message: 'stored', value: { token: 'hidden-from-model' }, exclude_value_from_context: true }),
  },
  {
    name: 'counter',
    description: 'Increments a session counter; fails after writing when asked.',
    parameters: { type: 'object', properties: { fail: { type: 'string', enum: ['throw', 'result'] } } },
    handler: async (params, context) => {
      if (context.session === null) return error('This tool needs X-Session-Id.');
      const count = ((await context.session.get<number>('count')) ?? 0) + 1;
      await context.session.set('count', count);
      if (params.fail === 'throw') throw new Error('failed after writing');
      if (params.fail === 'result') return error('failed after writing');
      return ok({ count }, `count is ${count}`);
    },
  },
  {
    name: 'writes_many',
    description: 'Waits, then writes keys k0..k(n-1) of the session with the same value.',
    parameters: {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 1 }, wait_ms: { type: 'integer', minimum: 0 }, value: { type: 'string' } },
      required: ['n', 'value'],
    },
    handler: async (params, context) => {
      await sleep((params.wait_ms as number | undefined) ?? 0);
      for (let i = 0; i < (params.n as number); i++) await context.session!.set(`k${i}`, params.value);
      return ok(null, 'written');
    },
  },
  {
    name: 'conflicts',
    description: 'Reads the counter, bumps it through a nested call, then writes: its own commit always conflicts.',
    parameters: noArgs,
    handler: async (_params, context) => {
      await context.session!.get('count');
      await context.invoke('counter', {});
      await context.session!.set('never', true);
      return ok(null, 'written');
    },
  },
  {
    name: 'mutates',
    description: 'Tries to change its params and its context.',
    parameters: { type: 'object', properties: { list: { type: 'array', items: { type: 'integer' } } } },
    handler: (params, context) => {
      const attempts: string[] = [];
      for (const attempt of [
        () => (params.list as number[]).push(4),
        () => ((params as Record<string, unknown>).extra = 1),
        () => ((context as unknown as Record<string, unknown>).callId = 'x'),
      ]) {
        try {
          attempt();
          attempts.push('changed');
        } catch {
          attempts.push('refused');
        }
      }
      return ok({ attempts, list: params.list });
    },
  },
  {
    name: 'steps',
    description: 'Works through n steps of ms milliseconds each, reporting progress after each.',
    parameters: { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 100 }, ms: { type: 'integer', minimum: 0 } }, required: ['n'] },
    result: { type: 'object', properties: { steps: { type: 'integer' } }, required: ['steps'] },
    annotations: { read_only: true, idempotent: true },
    handler: async (params, context) => {
      const n = params.n as number;
      for (let i = 1; i <= n; i++) {
        await sleep((params.ms as number | undefined) ?? 120, undefined, { signal: context.signal });
        context.progress(i, n);
      }
      return ok({ steps: n }, `${n} steps done`);
    },
  },
  {
    name: 'delegates',
    description: 'Calls echo through context.invoke.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    handler: async (params, context) => {
      const nested = await context.invoke('echo', { text: `inner ${params.text as string}` });
      return ok({ nested }, 'delegated');
    },
  },
];

export function registerTestTools(registry: SourceRegistry): void {
  for (const tool of testTools) registry.registerTool(counted(tool));
}
