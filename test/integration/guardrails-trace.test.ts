/** What the guardrails did is on the call's `execute_tool` span (`toolport.guardrails`), as a real OTLP receiver gets it. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTracing, stopTracing } from '../../src/tracing/index.ts';
import { makeApp, post } from '../helpers/app.ts';
import { OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { until } from '../helpers/tasks.ts';

describe('guardrails in traces', () => {
  let receiver: OtlpReceiver;
  let app: FastifyInstance;
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
    const folder = mkdtempSync(join(tmpdir(), 'toolport-guardrails-trace-'));
    writeFileSync(join(folder, 'tools.yaml'), 'guardrails:\n  - tools: [echo]\n    pattern: email\n    on: output\n    action: redact\n');
    app = await makeApp('memory', { env: { TOOLS_FILE: join(folder, 'tools.yaml'), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } });
  });
  afterAll(async () => {
    await app?.close();
    await stopTracing();
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    await receiver?.close();
  });

  it('marks the span with each action, and the redacted address never reaches the receiver', async () => {
    const { body } = await post(app, { name: 'echo', arguments: { text: 'mail jane@example.com' } });
    expect(body.value).toEqual({ text: 'mail [redacted:email]' });
    const marks = await until('the span arrives', async () => {
      await flushTracing();
      const found = receiver.spans.map((span) => span.attributes['toolport.guardrails']).filter((mark) => mark !== undefined);
      return found.length >= 1 ? found : null;
    });
    expect(marks).toEqual(['email:redact:output']);
    expect(JSON.stringify(receiver.spans)).not.toContain('jane@example.com');
  });
});
