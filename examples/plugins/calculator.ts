/**
 * An example toolport plugin: two small tools. A plugin needs no import from toolport; this one
 * uses `defineTool` only for types. Run it with: TOOL_PLUGINS=examples/plugins/calculator.ts npm start
 */
import { defineTool, error, ok } from '../../src/index.ts';

const add = defineTool<{ a: number; b: number }, { sum: number }>({
  name: 'add',
  description: 'Add two numbers and return their sum.',
  parameters: {
    type: 'object',
    properties: { a: { type: 'number', description: 'first addend' }, b: { type: 'number', description: 'second addend' } },
    required: ['a', 'b'],
  },
  result: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  examples: [{ description: 'two plus three', input: { a: 2, b: 3 }, output: { sum: 5 } }],
  annotations: { read_only: true, idempotent: true },
  // Pure arithmetic: repeating it is harmless, so no ledger record is worth its round trip.
  idempotency: { strategy: 'none' },
  handler: ({ a, b }) => ok({ sum: a + b }, `${a} + ${b} = ${a + b}`),
});

const divide = defineTool<{ dividend: number; divisor: number }, { quotient: number }>({
  name: 'divide',
  description: 'Divide one number by another.',
  parameters: {
    type: 'object',
    properties: { dividend: { type: 'number' }, divisor: { type: 'number' } },
    required: ['dividend', 'divisor'],
  },
  result: { type: 'object', properties: { quotient: { type: 'number' } }, required: ['quotient'] },
  annotations: { read_only: true },
  handler: ({ dividend, divisor }) =>
    divisor === 0
      ? error('Cannot divide by zero: pick a divisor other than 0.')
      : ok({ quotient: dividend / divisor }, `${dividend} / ${divisor} = ${dividend / divisor}`),
});

export default [add, divide];
