/** The Python client's own unittest suite (clients/python/), run by python3 against the real app on a port. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { testKeys, type TestKeys } from '../helpers/keys.ts';
import { ledgerTools } from '../helpers/ledger-tools.ts';

const CLIENT = fileURLToPath(new URL('../../clients/python', import.meta.url));

let app: FastifyInstance;
let url: string;
let keys: TestKeys;

beforeAll(async () => {
  keys = await testKeys(['*']);
  app = await makeApp('memory', { env: { API_KEYS_FILE: keys.file }, register: (registry) => ledgerTools.forEach((tool) => registry.registerTool(tool)) });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => app?.close());

describe('clients/python', () => {
  it('passes its unittest suite against a running toolport', async () => {
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        'python3',
        ['-m', 'unittest', 'discover', '-v', '-s', CLIENT],
        { env: { PATH: process.env.PATH ?? '', TOOLPORT_URL: url, TOOLPORT_API_KEY: keys.admin }, timeout: 90_000 },
        (err, stdout, stderr) => resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, output: stdout + stderr }),
      );
    });
    expect(output, output).toMatch(/Ran 6 tests/);
    expect(code, output).toBe(0);
  }, 120_000);
});
