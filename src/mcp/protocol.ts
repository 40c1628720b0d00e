/**
 * The Model Context Protocol's JSON-RPC vocabulary as toolport speaks it: versions of both eras,
 * error codes, the `_meta` keys of revision 2026-07-28, and message shapes. No HTTP here.
 */

import type { ErrorCode as SdkErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { isObject } from '../json.ts';

/** The handshake era (`initialize`), newest first: the first one is answered to a version we do not know. */
export const HANDSHAKE_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
/** The stateless revisions (`server/discover`, a `_meta` envelope on every request). */
export const STATELESS_VERSIONS = ['2026-07-28'] as const;
export const SUPPORTED_VERSIONS: readonly string[] = [...STATELESS_VERSIONS, ...HANDSHAKE_VERSIONS];
/** JSON-RPC batches existed in these revisions only (2025-06-18 removed them). */
export const BATCH_VERSIONS: readonly string[] = ['2024-11-05', '2025-03-26'];

/** Revision identifiers are ISO dates: the stateless era starts at 2026-07-28. */
export function isStatelessVersion(version: string): boolean {
  return version >= '2026-07-28';
}

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/**
 * JSON-RPC error codes. Those the MCP SDK's `ErrorCode` has are checked against it when compiling
 * (`satisfies`); the SDK is not imported at run time, because its types module builds every zod
 * schema of the protocol (≈ 250 ms measured) and a server without MCP sources never loads it.
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** resources/read of a URI that does not exist (the handshake era's answer). */
  ResourceNotFound: -32002,
  /** 2026-07-28: a standard header disagrees with the body, or is missing. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability it did not declare; data names it. */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the request's protocol version is not one the server speaks; data names the supported ones. */
  UnsupportedProtocolVersion: -32022,
  /** 2025-11-25: the request cannot go on until the person completes the URL-mode elicitations data names. */
  UrlElicitationRequired: -32042,
} as const satisfies Partial<{ [K in keyof typeof SdkErrorCode]: (typeof SdkErrorCode)[K] }> & Record<string, number>;

export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  { jsonrpc: '2.0'; id: RequestId; result: Record<string, unknown> } | { jsonrpc: '2.0'; id: RequestId | null; error: JsonRpcError };

/** A client's answer to a request of ours (elicitation/create): `result` or `error`, unchecked. */
export interface JsonRpcClientResponse {
  jsonrpc: '2.0';
  id: RequestId;
  result?: unknown;
  error?: unknown;
}

/** A message from the client: a request, a notification, or a response to a request of ours. */
export type ClientMessage =
  { kind: 'request'; message: JsonRpcRequest } | { kind: 'notification'; message: JsonRpcNotification } | { kind: 'response'; message: JsonRpcClientResponse };

/** A fault that answers with a JSON-RPC error; `status` is the HTTP status when it ends the whole POST. */
export class ProtocolFault extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly status = 400,
    readonly data?: unknown,
  ) {
    super(message);
  }

  toError(): JsonRpcError {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

function isId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** Classifies one JSON-RPC message, or throws InvalidRequest (-32600) when it is none. */
export function classify(value: unknown): ClientMessage {
  if (!isObject(value) || value.jsonrpc !== '2.0') throw new ProtocolFault(ErrorCode.InvalidRequest, 'not a JSON-RPC 2.0 message');
  if (value.params !== undefined && !isObject(value.params)) throw new ProtocolFault(ErrorCode.InvalidRequest, 'params must be an object');
  if (typeof value.method === 'string') {
    if (!('id' in value)) return { kind: 'notification', message: value as unknown as JsonRpcNotification };
    if (!isId(value.id)) throw new ProtocolFault(ErrorCode.InvalidRequest, 'a request id must be a string or a number');
    return { kind: 'request', message: value as unknown as JsonRpcRequest };
  }
  if ('method' in value) throw new ProtocolFault(ErrorCode.InvalidRequest, 'method must be a string');
  if (isId(value.id) && ('result' in value || 'error' in value)) return { kind: 'response', message: value as unknown as JsonRpcClientResponse };
  throw new ProtocolFault(ErrorCode.InvalidRequest, 'a message needs a method');
}

/** The id to answer an invalid message with: its own when it has a usable one. */
export function idOf(value: unknown): RequestId | null {
  return isObject(value) && isId(value.id) ? value.id : null;
}

export function errorResponse(id: RequestId | null, error: JsonRpcError): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error };
}

/** The `_meta` of a message's params, when it has one. */
export function metaOf(params: Record<string, unknown> | undefined): Record<string, unknown> | null {
  const meta = params?._meta;
  return isObject(meta) ? meta : null;
}
