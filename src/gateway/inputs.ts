import { z } from 'zod';

/** What callers send besides effect commands (src/core/effect-command.ts), validated in one place for every ingress. */

const step = z.union([z.string().min(1).max(128), z.number().int().nonnegative().transform(String)], { error: 'step is required: the position in the workflow plan (e.g. 3 or "charge")' });
export const workflowIdField = z.string().min(1, 'workflowId is required: it comes from the harness, one per agent run').max(256);

export const decisionInput = z.object({
  step,
  tool: z.string().min(1),
  args: z.record(z.string(), z.unknown()),
  decidedBy: z.string().max(256).optional(),
  tenant: z.string().optional(),
}).strict();

export const resolutionInput = z.object({
  outcome: z.enum(['committed', 'not_committed']),
  receipt: z.string().min(1).optional(),
  reason: z.string().min(1, 'say what you checked and where (the reason is kept in the ledger)'),
}).strict().refine((r) => r.outcome !== 'committed' || r.receipt, { message: 'a committed resolution needs the provider receipt you found (e.g. ch_…)', path: ['receipt'] });

export const releaseInput = z.object({
  reason: z.string().trim().min(1, 'a release needs a reason: why this is a separate effect and not a duplicate'),
}).strict();

export const sagaStartInput = z.object({
  saga: z.string().min(1),
  workflowId: workflowIdField,
  input: z.unknown(),
  tenant: z.string().optional(),
}).strict();

export const effectListQuery = z.object({
  state: z.string().optional(),
  tenant: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
});

export const workflowListQuery = z.object({
  tenant: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  attention: z.enum(['1', 'true', '0', 'false']).optional(),
});
