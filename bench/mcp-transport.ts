// `npx tsx bench/mcp-transport.ts`: the CPU an MCP client spends per tools/call over Streamable
// HTTP, with the official SDK's client transport (fetch, web streams) against toolport's own
// (src/sources/mcp/http-transport.ts, on undici.request), both driven by the SDK Client against the
// same upstream (the SDK's stateless server of sdk-stateless.ts, its own process). The CPU is this
// process's (process.cpuUsage) over each batch of calls; the two alternate in rounds and the
// medians are printed. Env: BENCH_CALLS (per round, default 2000), BENCH_ROUNDS (default 5),
// BENCH_CONNECTIONS (calls in flight, default 16).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent } from 'undici';
import { startChild, stopAll, waitUntilReady } from '../support/children.js';
import { freePorts } from '../support/ports.js';
import { UndiciStreamableHttpTransport } from '../src/sources/mcp/http-transport.ts';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const IN_FLIGHT = Number(process.env.BENCH_CONNECTIONS ?? 16);

async function cpuPerCall(client: Client, calls: number): Promise<number> {
  const before = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < calls) {
        const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
        if (result.isError) throw new Error('the call failed');
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const [port] = (await freePorts(1)) as [number];
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const upstream = startChild('SDK stateless server', process.execPath, ['--import', 'tsx', 'bench/sdk-stateless.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port) },
  });
  await waitUntilReady(upstream, 'its port', async () => (await fetch(url, { signal: AbortSignal.timeout(1000) })).status > 0, 60_000);
  const agent = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
  const kinds: Record<string, () => Transport> = {
    'SDK StreamableHTTPClientTransport (fetch)': () => new StreamableHTTPClientTransport(url),
    'toolport UndiciStreamableHttpTransport': () => new UndiciStreamableHttpTransport(url, agent),
  };
  const clients = new Map<string, Client>();
  for (const [name, make] of Object.entries(kinds)) {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(make());
    await cpuPerCall(client, 500); // warm-up
    clients.set(name, client);
  }
  const results = new Map<string, number[]>([...clients.keys()].map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, client] of clients) results.get(name)!.push(await cpuPerCall(client, CALLS));
  }
  console.log(`client CPU per tools/call (µs), ${IN_FLIGHT} in flight, ${ROUNDS} rounds of ${CALLS} calls, median [min–max]:`);
  for (const [name, xs] of results)
    console.log(`  ${name.padEnd(44)} ${median(xs).toFixed(0).padStart(6)}  [${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}]`);
  for (const client of clients.values()) await client.close();
  await agent.close();
} finally {
  await stopAll();
}
