/** A forwarded tools/call's result as the SDK's CallToolResultSchema reads it, and each call's own headers on an HTTP server. */
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { CallHeaders } from '../../src/sources/mcp/call-headers.ts';
import { checkCallToolResult } from '../../src/sources/mcp/call-result.ts';

describe('a tools/call result', () => {
  it('keeps the common answer (text, structured content, isError) as the schema would read it', () => {
    const answer = { content: [{ type: 'text', text: 'hi' }], structuredContent: { text: 'hi' }, isError: false };
    expect(checkCallToolResult(answer)).toBe(answer);
    expect(checkCallToolResult(answer)).toEqual(CallToolResultSchema.parse(answer));
  });

  it('reads every other answer with the SDK schema: other blocks, annotations, no content', () => {
    const image = { content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }] };
    expect(checkCallToolResult(image)).toEqual(CallToolResultSchema.parse(image));
    const annotated = { content: [{ type: 'text', text: 'hi', annotations: { priority: 1 } }], _meta: { at: 1 } };
    expect(checkCallToolResult(annotated)).toEqual(CallToolResultSchema.parse(annotated));
    expect(checkCallToolResult({ structuredContent: { a: 1 } })).toEqual({ content: [], structuredContent: { a: 1 } });
  });

  it('refuses what the SDK schema refuses', () => {
    for (const bad of [
      { content: [{ type: 'text', text: 7 }] },
      { content: [{ type: 'text', text: 'hi' }], structuredContent: [1] },
      { content: [{ type: 'text', text: 'hi' }], isError: 'yes' },
      { content: [{ type: 'video' }] },
    ]) {
      expect(CallToolResultSchema.safeParse(bad).success).toBe(false);
      expect(() => checkCallToolResult(bad)).toThrow();
    }
  });
});

describe("a call's own headers", () => {
  const request = (id: number, token: string) =>
    ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', _meta: { progressToken: token } } }) as const;
  const cancelled = (requestId: number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'x' } }) as const;

  it('go with its request and its notifications/cancelled, and with no other message', () => {
    const headers = new CallHeaders();
    headers.begin('toolport-1', { authorization: 'Bearer one' });
    headers.begin('toolport-2', { authorization: 'Bearer two' });
    expect(headers.of(request(5, 'toolport-2'))).toEqual({ authorization: 'Bearer two' });
    expect(headers.of(request(4, 'toolport-1'))).toEqual({ authorization: 'Bearer one' });
    expect(headers.of(cancelled(5))).toEqual({ authorization: 'Bearer two' });
    expect(headers.of(request(6, 'toolport-3'))).toBeUndefined();
    expect(headers.of({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeUndefined();
    headers.end('toolport-2');
    expect(headers.of(cancelled(5))).toBeUndefined();
    expect(headers.of(request(7, 'toolport-2'))).toBeUndefined();
    expect(headers.of(cancelled(4))).toEqual({ authorization: 'Bearer one' });
  });

  it("sends toolport's answer to a question the server asked on a call's stream with that call's headers, once", () => {
    const headers = new CallHeaders();
    headers.begin('toolport-1', { authorization: 'Bearer one' });
    headers.begin('toolport-2', { authorization: 'Bearer two' });
    headers.asked(0, 'toolport-2');
    headers.asked(1, 'toolport-1');
    const answer = (id: number) => ({ jsonrpc: '2.0' as const, id, result: { action: 'decline' } });
    expect(headers.of(answer(0))).toEqual({ authorization: 'Bearer two' });
    expect(headers.of(answer(0))).toBeUndefined();
    expect(headers.of(answer(2))).toBeUndefined();
    headers.end('toolport-1');
    expect(headers.of(answer(1))).toBeUndefined();
  });
});
