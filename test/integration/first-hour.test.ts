/** What a new user met in the first hour: answers in words, and a document that asks only for what the service needs. */
import { describe, expect, it } from 'vitest';
import { get, makeApp, post } from '../helpers/app.ts';
import { testKeys, bearer } from '../helpers/keys.ts';

describe('GET /tasks/{id}?wait_ms=', () => {
  it('refuses a bad wait in words, never with a regular expression', async () => {
    const app = await makeApp('memory');
    try {
      const accepted = await post(app, { name: 'slow', arguments: { ms: 10 } }, { prefer: 'respond-async' });
      for (const wait of ['soon', '30001', '-1']) {
        const answer = await get(app, `/tasks/${accepted.body.task_id}?wait_ms=${wait}`);
        expect(answer.status).toBe(400);
        expect(answer.body.detail).toBe('wait_ms must be a whole number from 0 to 30000');
      }
    } finally {
      await app.close();
    }
  });
});

describe('the OpenAPI document', () => {
  it('declares bearer security only when API keys are configured', async () => {
    const open = await makeApp('memory');
    const keys = await testKeys(['*']);
    const guarded = await makeApp('memory', { env: { API_KEYS_FILE: keys.file } });
    try {
      const openDocument = (await get(open, '/openapi.json')).body;
      expect(openDocument.security).toBeUndefined();
      expect(openDocument.components.securitySchemes).toBeUndefined();
      const guardedDocument = (await get(guarded, '/openapi.json', bearer(keys.admin))).body;
      expect(guardedDocument.security).toEqual([{ bearer: [] }]);
      expect(guardedDocument.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    } finally {
      await Promise.all([open.close(), guarded.close()]);
    }
  });
});

describe('README', () => {
  it('holds on its first screen what toolport is, the two commands and one call; names every prerequisite of npm test', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const firstScreen = readme.split('\n').slice(0, 25).join('\n');
    expect(firstScreen).toMatch(/executes the tool calls of large language models/);
    expect(firstScreen).toContain('npm ci && npm start');
    expect(firstScreen).toContain('npm test');
    expect(firstScreen).toMatch(/curl -s localhost:8080\/tools\/invoke/);
    for (const prerequisite of ['redis-server', 'python3', 'chromium', 'promtool']) expect(readme.split('\n## ')[0]).toContain(prerequisite);
  });
});
