/** What every provider's parser shares: picking the calls out of a turn's items, in order. */
import { NoToolCall } from '../errors.ts';
import type { ToolCall } from '../tools/invoke.ts';
import { callId, checkTurnSize } from './native.ts';
import { isObject } from '../json.ts';
import type { Format, ParsedCalls } from './types.ts';

type PickCall = (item: unknown, where: string) => ToolCall | null;

/**
 * The calls among a turn's items: `pick` answers a call, null for an item that is not a call
 * (text, reasoning…), or throws NoToolCall for a call item that is malformed.
 */
export function callsOfTurn(items: readonly unknown[], what: string, shapes: string, pick: PickCall): ParsedCalls {
  const calls: ToolCall[] = [];
  items.forEach((item, i) => {
    const call = pick(item, `${what}[${i}]`);
    if (call !== null) calls.push(call);
  });
  if (calls.length === 0) throw new NoToolCall(`${what} holds no tool call. Accepted shapes: ${shapes}`);
  checkTurnSize(calls.length, what);
  return { calls, turn: true };
}

/** A call item's name, or a 400 that says which item and which shape was expected. */
export function callName(raw: unknown, where: string, expected: string): string {
  if (typeof raw !== 'string' || raw === '') throw new NoToolCall(`${where} is not a tool call: the name is missing. Expected ${expected}`);
  return raw;
}

/** A call id the provider always sends and its result must quote back (OpenAI, Responses, Anthropic). */
export function requiredCallId(raw: unknown, where: string, expected: string): string {
  const id = callId(raw, where);
  if (id === null) throw new NoToolCall(`${where} is not a tool call: the id is missing. Expected ${expected}`);
  return id;
}

/** Arguments that arrive as an object (Anthropic, Gemini, MCP): absent means none; a string is a wrong value, not JSON text. */
export function objectArguments(raw: unknown): { arguments: unknown; parsed: true } {
  return { arguments: raw === undefined || raw === null ? {} : raw, parsed: true };
}

/**
 * detect + parse for a format whose body is one call (`isCall`) or a turn holding its items in
 * the array `turnKey`; `isTurn` may refuse a turn shape that belongs to another format.
 */
export function callOrTurn(
  turnKey: string,
  shapes: string,
  isCall: (body: unknown) => boolean,
  pick: PickCall,
  isTurn: (body: Record<string, unknown>) => boolean = () => true,
): Pick<Format, 'shapes' | 'detect' | 'parse'> {
  return {
    shapes,
    detect: (body) => isCall(body) || (isObject(body) && Array.isArray(body[turnKey]) && isTurn(body)),
    parse: (body) => {
      if (isCall(body)) return { calls: [pick(body, 'the call')!], turn: false };
      return callsOfTurn((body as Record<string, unknown[]>)[turnKey]!, turnKey, shapes, pick);
    },
  };
}
