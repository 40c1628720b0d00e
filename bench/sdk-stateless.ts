// The comparison row for POST /mcp: the official TypeScript SDK's stateless Streamable HTTP server
// as its documentation shows it (sessionIdGenerator undefined, a new McpServer and transport per
// request), on plain node:http so no framework cost is added to it. Serves the same `echo` tool.
// Answers as an SSE stream (the SDK's default), or as JSON with SDK_JSON=1 (`enableJsonResponse`).
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const JSON_ANSWERS = process.env.SDK_JSON === '1';

function buildServer(): McpServer {
  const server = new McpServer({ name: 'sdk-bench', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echo the text back (benchmark tool).', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: `echoed\n\n${JSON.stringify({ text })}` }],
    structuredContent: { text },
  }));
  return server;
}

const http = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/mcp') {
    res.writeHead(405).end();
    return;
  }
  const server = buildServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: JSON_ANSWERS });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  server
    .connect(transport)
    .then(() => transport.handleRequest(req, res))
    .catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
});

http.listen(Number(process.env.PORT ?? 3001), '127.0.0.1');
