/**
 * The policy stage's cost per call, in process: CPU µs of Dispatcher.invoke for an allowed call
 * with no rules (the stage is absent), 10 rules and 100 rules (CEL conditions that do not match,
 * so every rule is evaluated), against the same echo tool. `npm run bench:policy`.
 */
import { pino } from 'pino';
import { buildApp } from '../src/app/index.ts';
import { loadConfig } from '../src/config.ts';
import { OPEN_CALLER, type Dispatcher } from '../src/tools/invoke.ts';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';

const CALLS = Number(process.env.CALLS ?? 20_000);

async function dispatcherWith(rules: number): Promise<{ dispatcher: Dispatcher; close: () => Promise<void> }> {
  const env: Record<string, string> = { LOG_LEVEL: 'silent', BUILTINS: 'none' };
  if (rules > 0) {
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-bench-policy-'));
    const policy = Array.from({ length: rules }, (_, i) => ({ tools: ['echo*'], when: `args.amount > ${1_000_000 + i} && caller.admin`, action: 'deny' }));
    await writeFile(path.join(dir, 'tools.yaml'), stringify({ policy }));
    env.TOOLS_FILE = path.join(dir, 'tools.yaml');
  }
  const app = await buildApp(loadConfig(env), {
    register: (registry) =>
      registry.registerTool({
        name: 'echo',
        description: 'Echo.',
        parameters: { type: 'object', properties: { amount: { type: 'number' } } },
        handler: (params) => ({ message: 'ok', value: params.amount }),
      }),
  });
  await app.ready();
  return { dispatcher: app.toolport.dispatcher, close: () => app.close() };
}

async function measure(dispatcher: Dispatcher): Promise<number> {
  const log = pino({ level: 'silent' });
  const call = () =>
    dispatcher.invoke(
      { id: null, name: 'echo', arguments: { amount: 5 }, parsed: true },
      {
        caller: OPEN_CALLER,
        options: { requestId: 'bench', format: 'native', timeoutMs: null, receivedAt: Date.now(), cancellation: null },
        sinks: { sessionId: null, log },
      },
    );
  for (let i = 0; i < 2000; i++) await call(); // warm up
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await call();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

const rows: [string, number][] = [];
for (const rules of [0, 10, 100]) {
  const { dispatcher, close } = await dispatcherWith(rules);
  const samples = [];
  for (let round = 0; round < 3; round++) samples.push(await measure(dispatcher));
  samples.sort((a, b) => a - b);
  rows.push([rules === 0 ? 'no rules (stage absent)' : `${rules} rules`, samples[1]!]);
  await close();
}
for (const [label, us] of rows) process.stdout.write(`${label.padEnd(26)} ${us.toFixed(2)} µs CPU per call\n`);
