/**
 * The redaction stage's cost per call, in process: CPU µs of Dispatcher.invoke for a call whose
 * result (a message and a ≈1 KB value, no secret in it) is scanned for 0 known secrets (the stage is
 * absent), 10 and 1,000 (`${VAR}`s of the tools file, used as upstream headers). `npm run bench:redaction`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../src/app/index.ts';
import { loadConfig } from '../src/config.ts';
import { OPEN_CALLER, type Dispatcher } from '../src/tools/invoke.ts';

const CALLS = Number(process.env.CALLS ?? 20_000);
const VALUE = { items: Array.from({ length: 12 }, (_, i) => ({ id: i, name: `item number ${i}`, note: 'lorem ipsum dolor sit amet, consectetur' })) };

async function dispatcherWith(secrets: number): Promise<{ dispatcher: Dispatcher; close: () => Promise<void> }> {
  const env: Record<string, string> = { LOG_LEVEL: 'silent', BUILTINS: 'none' };
  if (secrets > 0) {
    const headers: Record<string, string> = {};
    for (let i = 0; i < secrets; i++) {
      process.env[`BENCH_SECRET_${i}`] = randomBytes(24).toString('base64url');
      headers[`X-Key-${i}`] = `\${BENCH_SECRET_${i}}`;
    }
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-bench-redaction-'));
    const http = [
      { name: 'never_called', description: 'An upstream with many keys.', parameters: { type: 'object' }, endpoint: { url: 'http://127.0.0.1:9/x', headers } },
    ];
    await writeFile(path.join(dir, 'tools.json'), JSON.stringify({ http }));
    env.TOOLS_FILE = path.join(dir, 'tools.json');
  }
  const app = await buildApp(loadConfig(env), {
    register: (registry) =>
      registry.registerTool({
        name: 'echo',
        description: 'Echo.',
        parameters: { type: 'object', properties: { amount: { type: 'number' } } },
        handler: () => ({ message: 'twelve items found for the query', value: VALUE }),
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
for (const secrets of [0, 10, 1000]) {
  const { dispatcher, close } = await dispatcherWith(secrets);
  const samples = [];
  for (let round = 0; round < 3; round++) samples.push(await measure(dispatcher));
  samples.sort((a, b) => a - b);
  rows.push([secrets === 0 ? 'no secrets (stage absent)' : `${secrets} known secrets`, samples[1]!]);
  await close();
}
process.stdout.write(`result: ${JSON.stringify(VALUE).length} characters of value\n`);
for (const [label, us] of rows) process.stdout.write(`${label.padEnd(26)} ${us.toFixed(2)} µs CPU per call\n`);
