// A tool call in each provider's shape (as POST /tools/invoke takes it), and the equivalent curl.

export const FORMATS = [
  { name: 'native', label: 'Native' },
  { name: 'openai', label: 'OpenAI Chat Completions' },
  { name: 'openai-responses', label: 'OpenAI Responses' },
  { name: 'anthropic', label: 'Anthropic Messages' },
  { name: 'gemini', label: 'Gemini' },
  { name: 'mcp', label: 'MCP tools/call' },
];

export function callBody(format, name, args, id) {
  switch (format) {
    case 'openai':
      return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
    case 'openai-responses':
      return { type: 'function_call', call_id: id, name, arguments: JSON.stringify(args) };
    case 'anthropic':
      return { type: 'tool_use', id, name, input: args };
    case 'gemini':
      return { functionCall: { id, name, args } };
    case 'mcp':
      return { name, arguments: args };
    default:
      return { id, name, arguments: args };
  }
}

const quote = (text) => `'${text.replace(/'/g, `'\\''`)}'`;

/** The curl command of a call; the key is named by a variable, never written out. */
export function curlCommand({ url, body, sessionId, keyed }) {
  const parts = [`curl -s ${quote(url)}`, `-H 'content-type: application/json'`];
  if (keyed) parts.push(`-H "Authorization: Bearer $TOOLPORT_API_KEY"`);
  if (sessionId) parts.push(`-H ${quote(`X-Session-Id: ${sessionId}`)}`);
  parts.push(`-d ${quote(JSON.stringify(body))}`);
  return parts.join(' \\\n  ');
}
