/** The approval webhook (docs/approvals.md): every new approval and decision POSTed, signed, retried off the call's path. */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post } from '../helpers/app.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';
import { bearer } from '../helpers/keys.ts';
import { until } from '../helpers/tasks.ts';

describe('the approval webhook', () => {
  let app: FastifyInstance;
  let fx: PolicyFixture;
  let receiver: Server;
  const received: { body: string; signature: string | undefined }[] = [];
  let refuseFirst = true;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        if (refuseFirst) {
          refuseFirst = false;
          res.writeHead(503).end();
          return;
        }
        received.push({ body, signature: req.headers['x-toolport-signature'] as string | undefined });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    fx = await policyFixture(undefined, { APPROVAL_WEBHOOK_URL: `http://127.0.0.1:${port}/hook`, APPROVAL_WEBHOOK_SECRET: 'shh' });
    app = await makeApp('memory', { env: fx.env, register: fx.register });
  });
  afterAll(async () => {
    await app?.close();
    receiver?.close();
  });

  it('posts the new approval and its decision as signed JSON, retrying a refused delivery, and counts each step', async () => {
    const held = await post(app, { name: 'payments_refund', arguments: { order: 'hook', amount: 4000 } }, bearer(fx.keys.agent));
    const id = held.body.approval.id as string;
    await post(app, { decision: 'deny', note: 'no' }, bearer(fx.keys.finance), `/approvals/${id}/decision`);
    await until('both notices', () => (received.length >= 2 ? received : null));
    const records = received.map((r) => JSON.parse(r.body) as { approval_id: string; status: string });
    expect(records.map((r) => [r.approval_id, r.status]).sort()).toEqual([
      [id, 'denied'],
      [id, 'pending'],
    ]);
    for (const { body, signature } of received) expect(signature).toBe(`sha256=${createHmac('sha256', 'shh').update(body).digest('hex')}`);
    const metrics = (await get(app, '/metrics', bearer(fx.keys.ops))).text;
    expect(metrics).toMatch(/toolport_approvals_total\{outcome="requested"\} 1/);
    expect(metrics).toMatch(/toolport_approvals_total\{outcome="denied"\} 1/);
  });
});
