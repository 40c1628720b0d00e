/** Approvals through the typed client and `toolport approvals`, against the real policy routes. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolportClient } from '../../src/client/index.ts';
import { makeApp } from '../helpers/app.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let app: FastifyInstance;
let fx: PolicyFixture;
let url: string;

beforeAll(async () => {
  fx = await policyFixture();
  app = await makeApp('memory', { env: fx.env, register: fx.register });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => app?.close());

describe('approvals from the client and the command', () => {
  it('lists a held call for its approver, and `toolport approvals approve` decides it', async () => {
    const agent = new ToolportClient({ baseUrl: url, apiKey: fx.keys.agent });
    const held = await agent.invoke('payments_refund', { order: 'o-cli', amount: 2000 });
    expect(held.error?.code).toBe('approval_required');
    const finance = new ToolportClient({ baseUrl: url, apiKey: fx.keys.finance });
    const pending = await finance.listApprovals();
    expect(pending.map((a) => a.approval_id)).toContain(held.approval!.id);

    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [`${ROOT}bin/toolport.js`, 'approvals', 'approve', held.approval!.id, '--note', 'fine'],
        { cwd: ROOT, env: { PATH: process.env.PATH ?? '', TOOLPORT_URL: url, TOOLPORT_API_KEY: fx.keys.finance }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err === null ? 0 : Number(err.code), stdout, stderr }),
      );
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`${held.approval!.id}: approved\n`);
    const after = await agent.invoke('payments_refund', { order: 'o-cli', amount: 2000 });
    expect(after.success).toBe(true);
  }, 60_000);
});
