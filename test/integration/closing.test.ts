/**
 * Closing (docs/deployment.md): a call in flight when the close begins still gets its answer, with
 * `Connection: close` so its keep-alive connection does not hold the close open.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';

interface Answer {
  status: number;
  connection: string | undefined;
  body: Record<string, unknown>;
}

function post(agent: http.Agent, port: number, body: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, path: '/tools/invoke', method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, connection: response.headers.connection, body: JSON.parse(text) }));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

describe('closing', () => {
  it('answers the call in flight with Connection: close, and the close ends once it is answered', async () => {
    const app = await makeApp('memory');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await post(agent, port, { name: 'echo', arguments: { text: 'a' } });
      expect(before.connection).toBe('keep-alive');
      const inFlight = post(agent, port, { name: 'slow', arguments: { ms: 400 } });
      await sleep(100);
      const started = Date.now();
      const closed = app.close();
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.body.success).toBe(true);
      expect(answer.connection).toBe('close');
      await closed;
      // Not held open until the keep-alive timeout (72 s) by the connection that carried the answer.
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      agent.destroy();
    }
  });
});
