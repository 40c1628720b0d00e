/** A start says one line per source at info (details at debug): an MCP server of 12 idempotent tools is one line, not 13. */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EVERYTHING, makeMcpApp, stdioServer } from '../helpers/mcp-upstreams.ts';
import { makeApp } from '../helpers/app.ts';

function capture(level: string) {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
  const logger = pino({ level }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { lines, logger };
}

describe('a quiet start', () => {
  it('logs one info line for an MCP server, and its tools details at debug', async () => {
    const info = capture('info');
    const quiet = await makeMcpApp('memory', [stdioServer('everything', EVERYTHING)], { logger: info.logger });
    await quiet.close();
    // The test tools of makeApp ('app options') have a line of their own.
    const started = info.lines.filter((line) => line.source !== 'app options' && !/clos/i.test(line.msg));
    expect(started.map((line) => line.msg)).toEqual(['MCP tools in the catalog']);

    const debug = capture('debug');
    const detailed = await makeMcpApp('memory', [stdioServer('everything', EVERYTHING)], { logger: debug.logger });
    await detailed.close();
    const hints = debug.lines.filter((line) => line.level === 20 && /annotations\.idempotent/.test(line.msg));
    expect(hints.length).toBeGreaterThan(1);
  }, 60_000);

  it('tells a plugin author once per plugin that idempotent hints do not reach the ledger', async () => {
    const info = capture('info');
    const app = await makeApp('memory', {
      logger: info.logger,
      register: (registry) => {
        for (const name of ['hint_a', 'hint_b', 'hint_c']) {
          registry.registerTool({
            name,
            description: 'Says it is idempotent.',
            parameters: { type: 'object', properties: {} },
            annotations: { idempotent: true },
            handler: () => ({ message: 'ok', value: null }),
          });
        }
      },
    });
    await app.close();
    const hints = info.lines.filter((line) => /annotations\.idempotent/.test(line.msg));
    expect(hints).toHaveLength(1);
    expect(hints[0]!.msg).toMatch(/^\d+ tool\(s\) of app options set annotations\.idempotent/);
  });
});
