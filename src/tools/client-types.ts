/** The shapes of what a handler tells and asks the caller's client (src/tools/client-requests.ts); no code. */
import type { Logger } from 'pino';

export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `context.log`: pino's logger, and callable as `context.log(level, message, data?)` to reach the MCP client too. */
export type ToolLog = Logger & ((level: LogLevel, message: string, data?: unknown) => void);

/** A form (`schema`: a flat JSON Schema object of primitives) or a URL the person visits. */
export type ElicitRequest = { message: string; schema: Record<string, unknown> } | { message: string; url: string };

export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

export interface SampleRequest {
  messages: { role: 'user' | 'assistant'; content: { type: string; [key: string]: unknown } }[];
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  stopSequences?: string[];
  modelPreferences?: Record<string, unknown>;
  includeContext?: 'none' | 'thisServer' | 'allServers';
  [key: string]: unknown;
}

export interface SampleResult {
  role: 'assistant';
  content: { type: string; [key: string]: unknown };
  model: string;
  stopReason?: string;
  [key: string]: unknown;
}

export type ClientMethod = 'elicitation/create' | 'sampling/createMessage';

/** The caller's client as the call reaches it; set on the scope by the MCP endpoint. */
export interface ClientChannel {
  /** Sends a log message, when the client listens at that level. */
  log(level: LogLevel, message: string, data: unknown, logger: string): void;
  /** `live`: asked inside the answer; `resume`: asked by answering `input_required`; `none`: it cannot answer. */
  reach(method: ClientMethod, params: Record<string, unknown>): Promise<'live' | 'resume' | 'none'>;
  /** Asks a live client and waits for its answer (JSON-RPC `result`); throws ToolFailure when it answers an error. */
  ask(method: ClientMethod, params: Record<string, unknown>): Promise<unknown>;
}
