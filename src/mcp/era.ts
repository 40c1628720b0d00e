/**
 * Which protocol era a message belongs to. The body decides (a `_meta` protocol-version claim means
 * revision 2026-07-28); the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers are cross-checked
 * against it, in the order the 2026-07-28 Streamable HTTP transport names them.
 */
import {
  ErrorCode,
  HANDSHAKE_VERSIONS,
  isStatelessVersion,
  META,
  metaOf,
  ProtocolFault,
  STATELESS_VERSIONS,
  SUPPORTED_VERSIONS,
  type JsonRpcNotification,
} from './protocol.ts';
import { isObject } from '../json.ts';

export type Era = 'handshake' | 'stateless';

export interface McpHeaders {
  protocolVersion: string | undefined;
  method: string | undefined;
  name: string | undefined;
}

const BASE64_SENTINEL = /^=\?base64\?(.*)\?=$/;
/** Requests whose Mcp-Name header carries params.taskId (the tasks extension). */
const TASK_ROUTED = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** Header values that are not plain ASCII arrive as `=?base64?…?=`. */
function decodeHeaderValue(value: string): string {
  const encoded = BASE64_SENTINEL.exec(value);
  return encoded === null ? value : Buffer.from(encoded[1]!, 'base64').toString('utf8');
}

function mismatch(message: string): ProtocolFault {
  return new ProtocolFault(ErrorCode.HeaderMismatch, message);
}

/** The era of one request (`isRequest`) or notification; throws the fault that answers it otherwise. */
export function eraOf(message: JsonRpcNotification, isRequest: boolean, headers: McpHeaders): Era {
  const meta = metaOf(message.params);
  const claim = meta?.[META.protocolVersion];
  const header = headers.protocolVersion;
  if (claim === undefined) {
    if (header !== undefined && isStatelessVersion(header)) {
      throw new ProtocolFault(
        ErrorCode.InvalidParams,
        `protocol version ${header} needs the _meta envelope (${META.protocolVersion}, ${META.clientCapabilities}) on every request`,
      );
    }
    if (header !== undefined && !(HANDSHAKE_VERSIONS as readonly string[]).includes(header)) {
      throw new ProtocolFault(ErrorCode.InvalidRequest, `unsupported MCP-Protocol-Version ${header}; supported: ${SUPPORTED_VERSIONS.join(', ')}`);
    }
    return 'handshake';
  }
  if (typeof claim !== 'string') throw new ProtocolFault(ErrorCode.InvalidParams, `_meta["${META.protocolVersion}"] must be a string`);
  if (header !== undefined && header !== claim) throw mismatch(`MCP-Protocol-Version header ${header} disagrees with the body's protocol version ${claim}`);
  if (!(STATELESS_VERSIONS as readonly string[]).includes(claim)) {
    throw new ProtocolFault(ErrorCode.UnsupportedProtocolVersion, `unsupported protocol version ${claim}`, 400, {
      supported: SUPPORTED_VERSIONS,
      requested: claim,
    });
  }
  if (!isObject(meta![META.clientCapabilities])) throw new ProtocolFault(ErrorCode.InvalidParams, `_meta["${META.clientCapabilities}"] must be an object`);
  if (isRequest) {
    if (header === undefined) throw mismatch('the MCP-Protocol-Version header is required');
    if (headers.method === undefined) throw mismatch('the Mcp-Method header is required');
    if (headers.method !== message.method) throw mismatch(`Mcp-Method header ${headers.method} disagrees with the body's method ${message.method}`);
    // tools/call names its tool; the tasks extension's methods name their task (so intermediaries can route them).
    const name = message.method === 'tools/call' ? message.params?.name : TASK_ROUTED.has(message.method) ? message.params?.taskId : undefined;
    if (typeof name === 'string') {
      if (headers.name === undefined) throw mismatch(`the Mcp-Name header is required for ${message.method}`);
      if (decodeHeaderValue(headers.name) !== name)
        throw mismatch(`the Mcp-Name header disagrees with the body's ${message.method === 'tools/call' ? 'tool name' : 'task id'}`);
    }
  }
  return 'stateless';
}
