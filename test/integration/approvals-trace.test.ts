/**
 * The trail of an approval in traces: the held call's span and the approved call's span carry
 * `toolport.approval` (the approval id and its status then), as a real OTLP receiver gets them.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTracing, stopTracing } from '../../src/tracing/index.ts';
import { makeApp, post } from '../helpers/app.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';
import { bearer } from '../helpers/keys.ts';
import { OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { until } from '../helpers/tasks.ts';

describe('approvals in traces', () => {
  let receiver: OtlpReceiver;
  let app: FastifyInstance;
  let fx: PolicyFixture;
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
    fx = await policyFixture();
    app = await makeApp('memory', { env: { ...fx.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, register: fx.register });
  });
  afterAll(async () => {
    await app?.close();
    await stopTracing();
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    await receiver?.close();
  });

  it('marks the held call pending and the approved run approved, with the approval id', async () => {
    const call = () => post(app, { name: 'payments_refund', arguments: { order: 'tr-1', amount: 5000 } }, bearer(fx.keys.agent));
    const id = (await call()).body.approval.id as string;
    expect((await post(app, { decision: 'approve' }, bearer(fx.keys.finance), `/approvals/${id}/decision`)).status).toBe(200);
    expect((await call()).body.success).toBe(true);
    await flushTracing();
    const marks = await until('both spans arrive', async () => {
      await flushTracing();
      const found = receiver.spans.map((span) => span.attributes['toolport.approval']).filter((mark) => mark !== undefined);
      return found.length >= 2 ? found : null;
    });
    expect(marks).toEqual(expect.arrayContaining([`${id} pending`, `${id} approved`]));
  });
});
