// The stdio upstream of `npm run bench:mcp`: the official SDK's McpServer over stdio, serving the
// same `echo` tool as sdk-stateless.ts. Plain JavaScript, so toolport runs it with `node` alone.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'sdk-bench-stdio', version: '1.0.0' });
server.registerTool('echo', { description: 'Echo the text back (benchmark tool).', inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: 'text', text: `echoed\n\n${JSON.stringify({ text })}` }],
  structuredContent: { text },
}));
await server.connect(new StdioServerTransport());
