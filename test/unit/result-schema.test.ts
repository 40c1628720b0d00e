/**
 * The typed client (src/client/types.ts) stays a standalone, dependency-free copy of the result's
 * shape, so this test holds it to the schema that serializes the answers (src/schemas.ts): the same
 * fields at every level, optional exactly where the schema does not require them, and (checked by
 * the type-check) a server answer is assignable to the client's type.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type * as Client from '../../src/client/types.ts';
import { invocationResultSchema, toolErrorSchema, turnResultSchema, type InvocationAnswer } from '../../src/schemas.ts';
import type { AnsweredResult, ToolError } from '../../src/tools/outcome.ts';

// Compile-time halves: every answer the server can serialize is a value of the client's types.
export const answerIsClientResult = (answer: InvocationAnswer): Client.InvocationResult => answer;
export const errorIsClientError = (error: ToolError): Client.ToolError => error;
export const resultIsAnswerOnceMessaged = (result: AnsweredResult, tool_message: unknown): InvocationAnswer => ({ ...result, tool_message });

const CLIENT_TYPES = fileURLToPath(new URL('../../src/client/types.ts', import.meta.url));
const source = ts.createSourceFile(CLIENT_TYPES, readFileSync(CLIENT_TYPES, 'utf8'), ts.ScriptTarget.Latest, true);

interface Shape {
  [field: string]: { optional: boolean; fields: Shape | null };
}

function declared(name: string): ts.TypeElement[] {
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement) && statement.name.text === name) return [...statement.members];
    if (ts.isTypeAliasDeclaration(statement) && statement.name.text === name && ts.isTypeLiteralNode(statement.type)) return [...statement.type.members];
  }
  throw new Error(`src/client/types.ts declares no ${name}`);
}

/** The fields of a type in the client's file, nested through inline object types, named interfaces and arrays of them. */
function clientShape(members: readonly ts.TypeElement[]): Shape {
  const shape: Shape = {};
  for (const member of members) {
    if (!ts.isPropertySignature(member) || member.type === undefined) continue; // the index signature
    shape[member.name.getText(source)] = { optional: member.questionToken !== undefined, fields: nested(member.type) };
  }
  return shape;
}

function nested(type: ts.TypeNode): Shape | null {
  if (ts.isUnionTypeNode(type)) return type.types.map(nested).find((shape) => shape !== null) ?? null;
  if (ts.isArrayTypeNode(type)) return nested(type.elementType);
  if (ts.isTypeLiteralNode(type)) return clientShape(type.members);
  if (ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) && /^[A-Z]/.test(type.typeName.text) && type.typeName.text !== 'Record') {
    return clientShape(declared(type.typeName.text));
  }
  return null;
}

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
}

function schemaShape(schema: JsonSchema): Shape {
  const shape: Shape = {};
  for (const [field, property] of Object.entries(schema.properties ?? {})) {
    const inner = property.items ?? property;
    shape[field] = { optional: !(schema.required ?? []).includes(field), fields: inner.properties === undefined ? null : schemaShape(inner) };
  }
  return shape;
}

describe('the client types and the result schema', () => {
  it.each([
    ['InvocationResult', invocationResultSchema],
    ['ToolError', toolErrorSchema],
    ['TurnResult', turnResultSchema],
  ])('declare the same fields of %s, optional alike, at every level', (name, schema) => {
    expect(clientShape(declared(name))).toEqual(schemaShape(schema as JsonSchema));
  });

  it('a field missing from the client would be seen', () => {
    const trimmed = { ...invocationResultSchema, properties: { ...invocationResultSchema.properties, guardrails: { type: 'array' } } };
    expect(clientShape(declared('InvocationResult'))).not.toEqual(schemaShape(trimmed as JsonSchema));
  });
});
