/** Errors across the isolation boundary (./protocol.ts): the fields that decide how a call answers, and the class again. */
import { StoreUnavailable } from '../../errors.ts';
import { AuthorizationRequired, InputRequired, ToolFailure } from '../failure.ts';
import type { AuthorizationLink } from '../outcome.ts';

/** An error as it crosses: the fields that decide how the call answers. */
export interface ErrorData {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  detail?: string;
  authorization?: AuthorizationLink;
  /** InputRequired: the questions the handler asked (context.elicit, context.sample). */
  requests?: InputRequired['requests'];
}

export function errorData(error: unknown): ErrorData {
  if (!(error instanceof Error)) return { name: 'Error', message: typeof error === 'string' ? error : String(error) };
  const fields = error as Error & { code?: unknown; detail?: unknown; authorization?: AuthorizationLink };
  return {
    name: error.name,
    message: error.message,
    ...(error.stack !== undefined && { stack: error.stack }),
    ...(typeof fields.code === 'string' && { code: fields.code }),
    ...(typeof fields.detail === 'string' && { detail: fields.detail }),
    ...(fields.authorization !== undefined && { authorization: fields.authorization }),
    ...(error instanceof InputRequired && { requests: error.requests }),
  };
}

/** The error again, as the class the call pipeline answers for (ToolFailure, AuthorizationRequired, StoreUnavailable). */
export function reviveError(data: ErrorData): Error {
  let error: Error;
  if (data.name === 'ToolFailure' && data.code !== undefined)
    error = new ToolFailure(data.code as ToolFailure['code'], data.message, data.detail ?? data.message);
  else if (data.name === 'AuthorizationRequired' && data.authorization !== undefined)
    error = new AuthorizationRequired(data.authorization, data.message, data.detail ?? data.message);
  else if (data.name === 'InputRequired' && data.requests !== undefined) error = new InputRequired(data.requests);
  else if (data.code === 'TP_STORE_UNAVAILABLE') error = new StoreUnavailable(data.message);
  else {
    error = new Error(data.message);
    error.name = data.name;
    Object.assign(error, data.code !== undefined && { code: data.code }, data.detail !== undefined && { detail: data.detail });
  }
  if (data.stack !== undefined) error.stack = data.stack;
  return error;
}
