/**
 * Traces (docs/tracing.md), received by a real OTLP/HTTP receiver decoding the protobuf the official
 * exporter sends: a request with a `traceparent` continues the caller's trace, each call of a turn
 * is an `execute_tool` span with the GenAI and toolport attributes, the ledger and the session
 * commit are child spans, an HTTP tool's upstream request carries the trace onward, a task's run is
 * linked to its request, and log lines carry the ids.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPEN_CALLER } from '../../src/tools/invoke.ts';
import { createLogger } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { captureTraceLink, flushTracing, runLinked, stopTracing, type TraceLink } from '../../src/tracing/index.ts';
import { makeApp } from '../helpers/app.ts';
import { registerLedgerTools } from '../helpers/ledger-tools.ts';
import { OtlpReceiver, SPAN_KIND, type ReceivedSpan } from '../helpers/otlp-receiver.ts';

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const CALLER_SPAN_2 = 'c8be7c827a314442';
const CALLER_SPAN_3 = 'd9cf8d938b425553';
const CALLER_SPAN_4 = 'e0d09e049c536664';
const traceparent = (span: string) => `00-${CALLER_TRACE}-${span}-01`;

/** An HTTP service standing in for a tool's upstream: records the headers of every request. */
async function startUpstream(): Promise<{ server: Server; url: string; headers: IncomingHttpHeaders[] }> {
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    headers.push(request.headers);
    request.resume().on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"temperature":21}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/now`, headers };
}

let capturedLink: TraceLink | null = null;

/** POSTs over a real socket (the body then arrives on the socket's own async context, unlike app.inject). */
async function send(app: FastifyInstance, body: unknown, headers: Record<string, string>, url = '/tools/invoke') {
  const address = app.server.address() as AddressInfo;
  const response = await fetch(`http://127.0.0.1:${address.port}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** A TOOLS_FILE with one HTTP tool forwarding to `url` (docs/tool-sources.md). */
async function toolsFile(folder: string, url: string): Promise<string> {
  const file = path.join(folder, 'tools.json');
  const weather = {
    name: 'weather_now',
    description: 'Current weather for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    endpoint: { url },
  };
  await writeFile(file, JSON.stringify({ http: [weather] }));
  return file;
}

function registerTracedTools(registry: SourceRegistry): void {
  registerLedgerTools(registry);
  registry.registerTool({
    name: 'traced_lookup',
    description: 'Looks a number up (called by a code mode program).',
    parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    handler: (params) => ok({ n: params.n }, 'found'),
  });
  registry.registerTool({
    name: 'start_task',
    description: 'Captures the trace link a task would store.',
    parameters: { type: 'object', properties: {} },
    handler: () => {
      capturedLink = captureTraceLink();
      return ok(null, 'started');
    },
  });
}

describe('traces', () => {
  let receiver: OtlpReceiver;
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let app: FastifyInstance;
  const lines: Record<string, unknown>[] = [];
  let folder: string;
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    upstream = await startUpstream();
    // The SDK reads OpenTelemetry's variables from the process environment, as in production.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
    folder = await mkdtemp(path.join(tmpdir(), 'toolport-tracing-'));
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, LOG_LEVEL: 'info', TOOLS_FILE: await toolsFile(folder, upstream.url), CODE_MODE: 'true' };
    const logger = createLogger(loadConfig(env), new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    app = await makeApp('memory', { env, logger, register: registerTracedTools });
    await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app?.close();
    await stopTracing();
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    await receiver?.close();
    await new Promise((resolve) => upstream?.server.close(resolve));
    await rm(folder, { recursive: true, force: true });
  });

  /** Sends the turn, a replay and a task; every assertion below reads the spans received. */
  let spans: ReceivedSpan[] = [];
  let asyncTaskId = '';
  const tag = `trace-${Date.now()}`;
  beforeAll(async () => {
    const turn = {
      role: 'assistant',
      // Long enough to arrive in several socket reads, after the request's first hooks have run.
      content: 'thinking '.repeat(60_000),
      tool_calls: [
        { id: 'call_echo', type: 'function', function: { name: 'echo', arguments: JSON.stringify({ text: 's3cr3t-argument' }) } },
        { id: 'call_charge', type: 'function', function: { name: 'charge_global', arguments: JSON.stringify({ tag }) } },
        { id: 'call_unknown', type: 'function', function: { name: 'no_such_tool', arguments: '{}' } },
        { id: 'call_throws', type: 'function', function: { name: 'throws', arguments: '{}' } },
        { id: 'call_weather', type: 'function', function: { name: 'weather_now', arguments: JSON.stringify({ city: 'Lyon' }) } },
        { id: 'call_task', type: 'function', function: { name: 'start_task', arguments: '{}' } },
      ],
    };
    const headers = { traceparent: traceparent(CALLER_SPAN), tracestate: 'gateway=1', 'x-session-id': 's-traced', 'x-request-id': 'req-traced-turn' };
    const first = await send(app, turn, headers);
    expect(first.status).toBe(200);
    expect(first.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, true, false, false, true, true]);
    const replay = await send(app, { id: 'call_again', name: 'charge_global', arguments: { tag } }, { traceparent: traceparent(CALLER_SPAN_2) });
    expect(replay.body.replayed).toBe(true);
    // A task started by the turn runs later, in a trace of its own linked to the request.
    const scope = {
      caller: OPEN_CALLER,
      options: { requestId: 'task-run', format: 'native', timeoutMs: null, receivedAt: Date.now(), cancellation: null },
      sinks: { sessionId: null, log: pino({ level: 'silent' }) },
    };
    // A task over HTTP (Prefer: respond-async): its run is a trace of its own, linked to the request.
    const accepted = await send(app, { name: 'echo', arguments: { text: 'async' } }, { prefer: 'respond-async', traceparent: traceparent(CALLER_SPAN_3) });
    expect(accepted.status).toBe(202);
    asyncTaskId = accepted.body.task_id as string;
    const ended = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/tasks/${accepted.body.task_id}?wait_ms=10000`);
    expect(await ended.json()).toMatchObject({ status: 'completed' });
    await runLinked(capturedLink, 'task echo', { 'toolport.task_id': 'task-1' }, () =>
      app.toolport.dispatcher.invoke({ id: 'call_in_task', name: 'echo', arguments: { text: 'later' } }, scope),
    );
    // A code mode program: its inner calls are nested calls of code_run.
    const program = await send(
      app,
      { id: 'call_program', name: 'code_run', arguments: { code: 'return [await tools.traced_lookup({ n: 1 }), await tools.traced_lookup({ n: 2 })];' } },
      { traceparent: traceparent(CALLER_SPAN_4) },
    );
    expect(program.body.success).toBe(true);
    await flushTracing();
    spans = receiver.spans;
  });

  const byName = (name: string, among = spans) => among.filter((s) => s.name === name);
  const one = (name: string, among = spans) => {
    const found = byName(name, among);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };
  const childrenOf = (parent: ReceivedSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);
  const requestSpan = (callerSpan: string) => spans.find((s) => s.kind === SPAN_KIND.server && s.parentSpanId === callerSpan)!;

  it("makes a code mode program's inner calls child spans of its code_run span", () => {
    const run = one('execute_tool code_run');
    expect(run.traceId).toBe(CALLER_TRACE);
    const inner = childrenOf(run).filter((s) => s.name.startsWith('execute_tool '));
    expect(inner.map((s) => s.name)).toEqual(['execute_tool traced_lookup', 'execute_tool traced_lookup']);
    expect(inner.every((s) => s.traceId === CALLER_TRACE)).toBe(true);
  });

  it('exports over OTLP/HTTP in protobuf, as service toolport', () => {
    expect(receiver.contentTypes.length).toBeGreaterThan(0);
    expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/x-protobuf']));
    expect(spans.every((s) => s.resource['service.name'] === 'toolport')).toBe(true);
  });

  it("makes the request span a child of the caller's span, in the caller's trace", () => {
    const request = requestSpan(CALLER_SPAN);
    expect(request).toBeDefined();
    expect(request).toMatchObject({ traceId: CALLER_TRACE, name: 'POST /tools/invoke', kind: SPAN_KIND.server });
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/tools/invoke',
      'http.response.status_code': 200,
      'toolport.request_id': 'req-traced-turn',
    });
  });

  it('makes one execute_tool span per call of the turn, with the GenAI and toolport attributes', () => {
    const calls = childrenOf(requestSpan(CALLER_SPAN)).filter((s) => s.name.startsWith('execute_tool '));
    expect(calls.map((s) => s.name).sort()).toEqual(
      [
        'execute_tool charge_global',
        'execute_tool echo',
        'execute_tool no_such_tool',
        'execute_tool start_task',
        'execute_tool throws',
        'execute_tool weather_now',
      ].sort(),
    );
    const echo = one('execute_tool echo', calls);
    expect(echo.traceId).toBe(CALLER_TRACE);
    expect(echo.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'gen_ai.tool.call.id': 'call_echo',
      'toolport.format': 'openai',
      'toolport.outcome': 'success',
      'toolport.ledger': 'none',
    });
    expect(echo.status.code).toBe(0);
  });

  it('marks the ledger miss that ran and the replay that hit, with ledger child spans', () => {
    const charged = one('execute_tool charge_global', childrenOf(requestSpan(CALLER_SPAN)));
    expect(charged.attributes).toMatchObject({ 'toolport.ledger': 'miss', 'toolport.outcome': 'success', 'gen_ai.tool.call.id': 'call_charge' });
    expect(
      childrenOf(charged)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['ledger begin', 'ledger complete', 'session commit']);
    const replayed = one('execute_tool charge_global', childrenOf(requestSpan(CALLER_SPAN_2)));
    expect(replayed.attributes).toMatchObject({
      'toolport.ledger': 'hit',
      'toolport.outcome': 'success',
      'toolport.format': 'native',
      'gen_ai.tool.call.id': 'call_again',
    });
    expect(childrenOf(replayed).map((s) => s.name)).toEqual(['ledger begin']);
  });

  it("records a failed call's error code as status and event, without its detail", () => {
    const calls = childrenOf(requestSpan(CALLER_SPAN));
    for (const [name, code] of [
      ['execute_tool no_such_tool', 'unknown_tool'],
      ['execute_tool throws', 'handler_error'],
    ] as const) {
      const failed = one(name, calls);
      expect(failed.attributes).toMatchObject({ 'toolport.outcome': code, 'toolport.error_code': code, 'error.type': code });
      expect(failed.status).toEqual({ code: 2, message: code });
      expect(failed.events).toEqual([{ name: 'tool_error', attributes: { 'toolport.error_code': code } }]);
    }
  });

  it('commits each call of a session in a child span', () => {
    const calls = childrenOf(requestSpan(CALLER_SPAN)).filter((s) => s.name.startsWith('execute_tool '));
    expect(calls).toHaveLength(6);
    for (const call of calls) {
      expect(byName('session commit', childrenOf(call)), call.name).toHaveLength(1);
    }
  });

  it("sends the trace on to an HTTP tool's upstream, under a client span of the call", () => {
    expect(upstream.headers).toHaveLength(1);
    expect(upstream.headers[0]!['x-request-id']).toBe('req-traced-turn');
    const sent = String(upstream.headers[0]!.traceparent);
    expect(sent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    const client = spans.find((s) => s.spanId === sent.split('-')[2])!;
    expect(client).toBeDefined();
    expect(client.kind).toBe(SPAN_KIND.client);
    expect(spans.find((s) => s.spanId === client.parentSpanId)?.name).toBe('execute_tool weather_now');
  });

  it('links the run of a task started with Prefer: respond-async to the request that created it', () => {
    const request = requestSpan(CALLER_SPAN_3);
    const run = spans.find((s) => s.name === 'task echo' && s.links.some((l) => l.spanId === request.spanId))!;
    expect(run).toBeDefined();
    expect(run.parentSpanId).toBeNull();
    expect(run.traceId).not.toBe(CALLER_TRACE);
    expect(run.links).toEqual([{ traceId: CALLER_TRACE, spanId: request.spanId }]);
    expect(run.attributes['toolport.task_id']).toBe(asyncTaskId);
    expect(childrenOf(run).map((s) => s.name)).toEqual(['execute_tool echo']);
  });

  it('links a task run to the span that captured the link, with its calls inside', () => {
    const task = one(
      'task echo',
      spans.filter((s) => s.attributes['toolport.task_id'] === 'task-1'),
    );
    expect(task.parentSpanId).toBeNull();
    expect(task.traceId).not.toBe(CALLER_TRACE);
    const starter = one('execute_tool start_task');
    expect(task.links).toEqual([{ traceId: CALLER_TRACE, spanId: starter.spanId }]);
    expect(task.attributes).toMatchObject({ 'toolport.task_id': 'task-1' });
    expect(childrenOf(task).map((s) => s.name)).toEqual(['execute_tool echo']);
  });

  it('puts no argument values or error details on spans by default', () => {
    const everything = JSON.stringify(spans);
    expect(everything).not.toContain('s3cr3t-argument');
    expect(everything).not.toContain('Lyon');
    expect(everything).not.toContain('database exploded');
  });

  it("writes trace_id and span_id in every log line of the traced request, the call's span in its own lines", () => {
    const mine = lines.filter((line) => line.reqId === 'req-traced-turn');
    expect(mine.length).toBeGreaterThanOrEqual(6);
    for (const line of mine) expect(line).toMatchObject({ trace_id: CALLER_TRACE, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    const echoLine = mine.find((line) => line.msg === 'tool invoked' && line.tool === 'echo')!;
    expect(echoLine.span_id).toBe(one('execute_tool echo', childrenOf(requestSpan(CALLER_SPAN))).spanId);
  });

  it('adds arguments and error details only when TOOLPORT_TRACE_ARGUMENTS=true', async () => {
    const debugging = await makeApp('memory', { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, TOOLPORT_TRACE_ARGUMENTS: 'true' } });
    try {
      const trace = 'ab'.repeat(16);
      await debugging.listen({ port: 0, host: '127.0.0.1' });
      await send(
        debugging,
        {
          calls: [
            { id: 'dbg_1', name: 'echo', arguments: { text: 'visible-argument' } },
            { id: 'dbg_2', name: 'throws', arguments: {} },
          ],
        },
        { traceparent: `00-${trace}-${'cd'.repeat(8)}-01` },
      );
      await flushTracing();
      const mine = receiver.spans.filter((s) => s.traceId === trace);
      expect(one('execute_tool echo', mine).attributes['gen_ai.tool.call.arguments']).toBe('{"text":"visible-argument"}');
      expect(one('execute_tool throws', mine).events[0]!.attributes['toolport.error_detail']).toContain('database exploded');
    } finally {
      await debugging.close();
    }
  });
});
