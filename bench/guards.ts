/**
 * What the guardrail stage and the audit log cost per call, in process: CPU µs of Dispatcher.invoke
 * of one echo tool, each variant measured in interleaved rounds (A, B, A, B…, each round starting
 * with the next variant) and reported as the median round. `npm run bench:guards`.
 *
 * - baseline: no guardrails (no stage), AUDIT_LOG=false
 * - guardrails configured for other tools only (the stage is there; this tool has no rule)
 * - guardrails: email and credit_card redaction on the output, which matches nothing
 * - the audit log on (the default), no guardrails
 * - on Redis (a throwaway redis-server): AUDIT_LOG=false against the audit log on (one script per batch)
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { Dispatcher } from '../src/tools/invoke.ts';
import { RedisServer } from '../support/redis-server.ts';

const CALLS = Number(process.env.CALLS ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

interface Variant {
  label: string;
  guardrails: unknown[] | null;
  audit: boolean;
  redis?: boolean;
}

const VARIANTS: Variant[] = [
  { label: 'baseline (no stage, AUDIT_LOG=false)', guardrails: null, audit: false },
  { label: 'guardrails for other tools only', guardrails: [{ tools: ['other_*'], pattern: 'email', action: 'redact' }], audit: false },
  {
    label: 'guardrails: email + card on output',
    guardrails: [
      { pattern: 'email', on: 'output', action: 'redact' },
      { pattern: 'credit_card', on: 'output', action: 'redact' },
    ],
    audit: false,
  },
  { label: 'audit log on (memory store)', guardrails: null, audit: true },
  { label: 'redis store, AUDIT_LOG=false', guardrails: null, audit: false, redis: true },
  { label: 'redis store, audit log on', guardrails: null, audit: true, redis: true },
];

const redis = await RedisServer.start();

async function dispatcherOf(variant: Variant): Promise<{ dispatcher: Dispatcher; close: () => Promise<void> }> {
  const env: Record<string, string> = { LOG_LEVEL: 'silent', BUILTINS: 'none', AUDIT_LOG: String(variant.audit), KEY_PREFIX: `bench-guards-${Math.random()}:` };
  if (variant.redis === true) env.REDIS_URL = redis.url;
  if (variant.guardrails !== null) {
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-bench-guards-'));
    await writeFile(path.join(dir, 'tools.yaml'), stringify({ guardrails: variant.guardrails }));
    env.TOOLS_FILE = path.join(dir, 'tools.yaml');
  }
  const app = await buildApp(loadConfig(env), {
    register: (registry) =>
      registry.registerTool({
        name: 'echo',
        description: 'Echo.',
        parameters: { type: 'object', properties: { text: { type: 'string' } } },
        handler: (params) => ({ message: 'ok', value: { text: params.text, note: 'nothing to redact here' } }),
      }),
  });
  await app.ready();
  return { dispatcher: app.toolport.dispatcher, close: () => app.close() };
}

async function measure(dispatcher: Dispatcher, calls: number): Promise<number> {
  const log = pino({ level: 'silent' });
  const call = () =>
    dispatcher.invoke(
      { id: null, name: 'echo', arguments: { text: 'hello world' }, parsed: true },
      { requestId: 'bench', sessionId: null, caller: null, principal: null, timeoutMs: null, receivedAt: Date.now(), log, cancellation: null },
    );
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) await call();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

const built = await Promise.all(VARIANTS.map(dispatcherOf));
for (const { dispatcher } of built) await measure(dispatcher, 2000); // warm up
const samples: number[][] = VARIANTS.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  // Each round starts with another variant, so none always pays for the garbage of the one before.
  for (let k = 0; k < built.length; k++) {
    const i = (round + k) % built.length;
    samples[i]!.push(await measure(built[i]!.dispatcher, CALLS));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const base = median(samples[0]!);
for (let i = 0; i < VARIANTS.length; i++) {
  const us = median(samples[i]!);
  const against = VARIANTS[i]!.redis === true && VARIANTS[i]!.audit ? median(samples[i - 1]!) : base;
  const delta = i === 0 || (VARIANTS[i]!.redis === true && !VARIANTS[i]!.audit) ? '' : `  (${us - against >= 0 ? '+' : ''}${(us - against).toFixed(2)} µs)`;
  process.stdout.write(`${VARIANTS[i]!.label.padEnd(40)} ${us.toFixed(2)} µs CPU per call${delta}\n`);
}
await Promise.all(built.map(({ close }) => close()));
await redis.stop();
