import { z } from 'zod';
import { argsField, refuseReservedKeys, stepField, tenantField, toolField, workflowIdField } from '../core/effect-command.js';

/** What callers send besides effect commands (src/core/effect-command.ts), validated in one place for every ingress. */

/** The one definition (src/core/effect-command.ts): effects, decisions, sagas and every URL take a workflowId by it. */
export { workflowIdField };

export const decisionInput = z.object({
  step: stepField,
  tool: toolField,
  args: argsField,
  decidedBy: z.string().max(256).optional(),
  tenant: tenantField.optional(),
}).strict();

/** A saga's input as sent: any JSON, without keys JavaScript gives a meaning of their own. */
export const sagaInputField = z.unknown().superRefine(refuseReservedKeys);

export const resolutionInput = z.object({
  outcome: z.enum(['committed', 'not_committed']),
  receipt: z.string().min(1).optional(),
  reason: z.string({ error: 'a resolution needs a reason: say what you checked and where (the reason is kept in the ledger)' }).min(1, 'say what you checked and where (the reason is kept in the ledger)'),
}).strict().refine((r) => r.outcome !== 'committed' || r.receipt, { message: 'a committed resolution needs the provider receipt you found (e.g. ch_…)', path: ['receipt'] });

export const releaseInput = z.object({
  reason: z.string({ error: 'a release needs a reason: why this is a separate effect and not a duplicate' }).trim().min(1, 'a release needs a reason: why this is a separate effect and not a duplicate'),
}).strict();

export const sagaStartInput = z.object({
  saga: z.string().min(1),
  workflowId: workflowIdField,
  input: sagaInputField,
  tenant: tenantField.optional(),
}).strict();

export const effectListQuery = z.object({
  state: z.string().optional(),
  tenant: tenantField.optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
});

export const workflowListQuery = z.object({
  tenant: tenantField.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  attention: z.enum(['1', 'true', '0', 'false']).optional(),
});

export const duplicateHandlingInput = z.object({
  action: z.enum(['compensate', 'keep'], { error: 'action must be "compensate" (undo the extra object with the tool\'s undo) or "keep" (both stay, on purpose)' }),
  reason: z.string().trim().min(1, 'say why (the reason is kept in the ledger)'),
}).strict();
