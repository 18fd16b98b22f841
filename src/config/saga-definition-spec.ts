import { z } from 'zod';
import type { CompensationDefinition, SagaDefinition, SagaStepDefinition } from '../core/saga/saga-definition.js';

// The shape of a user's saga as a config module exports it (code, not JSON). Only the shape is
// checked here; the rules (compensations, order, tools' contracts) are validateSaga's, at registration.
const fn = <F>(what: string, signature: string) => z.custom<F>((value) => typeof value === 'function', `${what} must be a function ${signature}`);

const compensationSpec = z.object({
  name: z.string().min(1),
  tool: z.string().min(1),
  reversibility: z.enum(['idempotent', 'compensable', 'irreversible']),
  irreversibleBecause: z.string().min(1).optional(),
  args: fn<CompensationDefinition<any>['args']>('args', '(receipt, input, receipts) => ({ …the undo tool\'s arguments })'),
}).strict();

const stepSpec = z.object({
  name: z.string().min(1),
  tool: z.string().min(1),
  reversibility: z.enum(['read', 'idempotent', 'compensable', 'irreversible']),
  args: fn<SagaStepDefinition<any>['args']>('args', '(input, receipts) => ({ …the tool\'s arguments })'),
  compensation: compensationSpec.optional(),
}).strict();

/** A saga's input schema: a zod schema (effectd re-exports `z`), told apart by what effectd calls on it. */
const inputSchema = z.custom<z.ZodType<any>>(
  (value) => typeof (value as { safeParse?: unknown } | null)?.safeParse === 'function',
  'input must be a zod schema (import { z } from \'effectd\')',
);

export const sagaDefinitionSpec = z.object({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/, 'saga names are lower-case words joined by dashes, e.g. book-and-bill'),
  version: z.number().int().positive().default(1),
  description: z.string().default(''),
  input: inputSchema,
  steps: z.array(stepSpec),
}).strict();
