/** The shapes the client sends and receives (the service's own, as its OpenAPI document describes them). */

export type Format = 'native' | 'openai' | 'openai-responses' | 'anthropic' | 'gemini' | 'mcp';

export interface ClientOptions {
  /** Where the service answers, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Further attempts after a connection failure or a 5xx answer (default 2). */
  retries?: number;
  /** Another fetch (a test double, a proxy-aware one). */
  fetch?: typeof fetch;
}

export interface InvokeOptions {
  /** `X-Session-Id`: the session the call belongs to (required by the planning tools). */
  sessionId?: string;
  /** `Idempotency-Key`: your own; otherwise one is made up per call and kept across its retries. */
  idempotencyKey?: string;
  /** `X-Timeout-Ms`: your deadline for this call. */
  timeoutMs?: number;
  /** The call's id (one is made up otherwise). */
  id?: string;
}

export interface ToolError {
  code: string;
  detail: string;
}

export interface InvocationResult {
  id: string;
  name: string;
  success: boolean;
  message: string;
  value: unknown;
  exclude_value_from_context: boolean;
  error: ToolError | null;
  /** The text the model should see. */
  content: string;
  /** The provider-native result, ready to append to the conversation. */
  tool_message: unknown;
  replayed: boolean;
  effect_id: string | null;
  idempotency_key: string | null;
  tool_hash: string | null;
  duration_ms: number;
  /** Where the whole result is kept when `content` was cut. */
  result_ref?: { uri: string; url: string; chars: number };
  /** A call held for a person's approval. */
  approval?: { id: string; url: string; status: string; expires_at: string };
  /** What the guardrails did to the call, when they did anything. */
  guardrails?: { name: string; action: 'redact' | 'deny' | 'flag'; where: 'input' | 'output' }[];
  [member: string]: unknown;
}

export interface TurnResult {
  results: InvocationResult[];
  /** What to append to the conversation, in the turn's format. */
  messages: unknown[];
}

export interface ToolList {
  tools: Record<string, unknown>[];
  hash: string;
  tool_choice?: unknown;
}

export interface Task {
  task_id: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  tool: string;
  call_id: string;
  created_at: string;
  updated_at: string;
  ttl_s: number;
  poll_interval_ms: number;
  progress?: { done: number; total?: number };
  /** Once completed: what the synchronous call would have answered. */
  result?: InvocationResult | TurnResult;
  error?: ToolError;
  [member: string]: unknown;
}

export interface Approval {
  approval_id: string;
  status: 'pending' | 'approved' | 'denied' | 'expired' | 'executed';
  tool: string;
  arguments: Record<string, unknown>;
  caller: string | null;
  session_id: string | null;
  created_at: string;
  expires_at: string;
  decision: { by: string; at: string; note?: string; arguments_edited: boolean } | null;
  [member: string]: unknown;
}

export interface ApprovalDecision {
  decision: 'approve' | 'deny';
  note?: string;
  /** Approve only: replaces the call's arguments (checked against the tool's schema). */
  arguments?: Record<string, unknown>;
}

export interface ResultResource {
  [member: string]: unknown;
}
