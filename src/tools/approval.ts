/**
 * A tool definition's `approval: {approvers?, ttl_s?}` (docs/approvals.md), checked when the tool registers.
 * Kept apart from the CEL rules so that the catalog never loads CEL.
 */
import { isObject } from '../json.ts';

/** Who may decide when a rule names no one: admin keys (who always may). */
export const DEFAULT_APPROVERS: readonly string[] = ['admin'];

export interface ToolApproval {
  readonly approvers: readonly string[];
  /** Null: APPROVAL_TTL_S. */
  readonly ttlS: number | null;
}

export function approvers(value: unknown, fail: (problem: string) => never): readonly string[] {
  if (value === undefined) return DEFAULT_APPROVERS;
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== ''))
    fail('approvers must be a non-empty list of key ids, groups, "admin" or "client"');
  return Object.freeze([...(value as string[])]);
}

export function ttl(value: unknown, fail: (problem: string) => never): number | null {
  if (value === undefined) return null;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 30 * 86400) fail('ttl_s must be a whole number of seconds from 1 to 2592000');
  return value as number;
}

export function checkToolApproval(value: unknown, fail: (problem: string) => never): ToolApproval | null {
  if (value === undefined) return null;
  if (!isObject(value)) return fail('approval must be an object {approvers?, ttl_s?}');
  const unknown = Object.keys(value).find((k) => k !== 'approvers' && k !== 'ttl_s');
  if (unknown !== undefined) fail(`approval.${unknown} is not one of approvers, ttl_s`);
  return Object.freeze({ approvers: approvers(value.approvers, (p) => fail(`approval: ${p}`)), ttlS: ttl(value.ttl_s, (p) => fail(`approval: ${p}`)) });
}
