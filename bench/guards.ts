/**
 * What the guardrail stage and the audit log cost per call, in process: CPU µs of Dispatcher.invoke
 * of one echo tool, each variant measured in interleaved rounds (A, B, A, B…, each round starting
 * with the next variant) and reported as the median round (and the least, steadier on a busy machine). `npm run bench:guards`.
 *
 * - baseline: no guardrails (no stage), AUDIT_LOG=false
 * - guardrails configured for other tools only (the stage is there; this tool has no rule)
 * - guardrails: email and credit_card redaction on the output, which matches nothing
 * - the audit log on (the default), no guardrails
 * - on Redis (a throwaway redis-server): AUDIT_LOG=false against the audit log on (one script per batch)
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { buildApp } from '../src/app/index.ts';
import { loadConfig } from '../src/config.ts';
import { OPEN_CALLER, type Dispatcher } from '../src/tools/invoke.ts';
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
      {
        caller: OPEN_CALLER,
        options: { requestId: 'bench', format: 'native', timeoutMs: null, receivedAt: Date.now(), cancellation: null },
        sinks: { sessionId: null, log },
      },
    );
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) await call();
  const used = process.cpuUsage(start);
  // Let the batches of the call feed and the audit log (written within 50 ms) and their replies end
  // here, not in the next variant's measurement: CPU time is the whole process's.
  await sleep(200);
  return (used.user + used.system) / calls;
}

// Measured here, the first app a process builds costs some 2 µs more per call than an identical one
// built after it, whatever the order of the rounds: a first, unreported copy of the baseline takes that.
const spare = await dispatcherOf(VARIANTS[0]!);
const built = await Promise.all(VARIANTS.map(dispatcherOf));
for (const { dispatcher } of [spare, ...built]) await measure(dispatcher, 2000); // warm up
const samples: number[][] = VARIANTS.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  // Each round starts with another variant, so none always pays for the garbage of the one before.
  await measure(spare.dispatcher, CALLS);
  for (let k = 0; k < built.length; k++) {
    const i = (round + k) % built.length;
    samples[i]!.push(await measure(built[i]!.dispatcher, CALLS));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const least = (values: number[]) => Math.min(...values);
const delta = (us: number, against: number) => `${us - against >= 0 ? '+' : ''}${(us - against).toFixed(2)}`;
process.stdout.write(`${'variant'.padEnd(40)} µs CPU per call: median (least) of ${ROUNDS} rounds, and against its baseline\n`);
for (let i = 0; i < VARIANTS.length; i++) {
  const variant = VARIANTS[i]!;
  // The Redis pair is compared with itself; every other variant with the first.
  const base = variant.redis === true ? (variant.audit ? i - 1 : i) : 0;
  const [us, low] = [median(samples[i]!), least(samples[i]!)];
  const against = base === i ? '' : `  ${delta(us, median(samples[base]!))} (${delta(low, least(samples[base]!))})`;
  process.stdout.write(`${variant.label.padEnd(40)} ${us.toFixed(2)} (${low.toFixed(2)})${against}\n`);
}
await Promise.all([spare, ...built].map(({ close }) => close()));
await redis.stop();
