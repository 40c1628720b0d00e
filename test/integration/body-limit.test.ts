/**
 * A body over MAX_BODY_BYTES: the client receives the 413 problem, not a reset connection, whether
 * it is Node's http client (with Content-Length or chunked), fetch, or Python's http.client.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';

const TEN_MB = 10 * 1024 * 1024;
const body = Buffer.alloc(TEN_MB, 'a');

function nodeHttp(port: number, chunked: boolean): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json', ...(!chunked && { 'content-length': body.length }) };
    const request = http.request({ host: '127.0.0.1', port, path: '/tools/invoke', method: 'POST', headers }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, text }));
    });
    request.on('error', reject);
    if (!chunked) return request.end(body);
    // Chunked, in 64 KiB pieces, as a streaming client sends it.
    let offset = 0;
    const writeMore = () => {
      while (offset < body.length) {
        const piece = body.subarray(offset, offset + 65536);
        offset += piece.length;
        if (!request.write(piece)) return request.once('drain', writeMore);
      }
      request.end();
    };
    writeMore();
  });
}

const PYTHON = `
import http.client, sys
connection = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=30)
connection.request('POST', '/tools/invoke', body=b'a' * (10 * 1024 * 1024), headers={'content-type': 'application/json'})
response = connection.getresponse()
print(response.status)
print(response.read().decode())
`;

describe('bodies over the limit', () => {
  let app: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    app = await makeApp('memory');
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(() => app.close());

  const expectProblem = ({ status, text }: { status: number; text: string }) => {
    expect(status).toBe(413);
    expect(JSON.parse(text)).toMatchObject({ type: 'urn:toolport:problem:body-too-large', status: 413 });
  };

  it("answers Node's http client sending 10 MB with Content-Length with the 413 problem", async () => {
    expectProblem(await nodeHttp(port, false));
  });

  it("answers Node's http client sending 10 MB chunked with the 413 problem", async () => {
    expectProblem(await nodeHttp(port, true));
  });

  it('answers fetch with the 413 problem', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/tools/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expectProblem({ status: response.status, text: await response.text() });
  });

  it("answers Python's http.client with the 413 problem", async () => {
    let output: string;
    try {
      ({ stdout: output } = await promisify(execFile)('python3', ['-c', PYTHON, String(port)], { timeout: 60_000 }));
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT')
        throw new Error('python3 is missing: install it (apt-get install python3) to run this test', { cause: err });
      throw err;
    }
    const [status, ...rest] = output.trim().split('\n');
    expectProblem({ status: Number(status), text: rest.join('\n') });
  }, 60_000);

  it('keeps answering small bodies on the same server afterwards', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'echo', arguments: { text: 'hi' } }),
    });
    expect(response.status).toBe(200);
  });
});
