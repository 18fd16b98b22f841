import { z } from 'zod';
import { argsField, refuseReservedKeys, stepField, tenantField, toolField, workflowIdField } from '../core/effect-command.js';
import { invalidCommand } from '../core/errors.js';

/** What callers send besides effect commands (src/core/effect-command.ts), validated in one place for every ingress. */

/** The one definition (src/core/effect-command.ts): effects, decisions, sagas and every URL take a workflowId by it. */
export { workflowIdField };

/** A workflow id from a URL or a body, checked (`invalid_command` naming `workflowId`). */
export function workflowIdOf(raw: unknown): string {
  const parsed = workflowIdField.safeParse(raw);
  if (!parsed.success) throw invalidCommand('invalid workflow id', parsed.error.issues, ['workflowId']);
  return parsed.data;
}

export const decisionInput = z.object({
  step: stepField,
  tool: toolField,
  args: argsField,
  decidedBy: z.string().max(256).optional().meta({ description: 'Who or what decided (e.g. the model\'s name), as a label: kept and shown as the caller\'s claim (`claimedBy`), never verified; the credential that sent it is recorded as `recordedBy`.' }),
  tenant: tenantField.optional(),
}).strict().meta({ description: 'The model\'s decision for a step (tool and arguments), journaled before acting so a resumed task re-reads it instead of asking again.' });

/** A saga's input as sent: any JSON, without keys JavaScript gives a meaning of their own. */
export const sagaInputField = z.unknown().superRefine(refuseReservedKeys).meta({ description: 'The saga\'s input (GET /v1/sagas/definitions gives each saga\'s input schema).' });

export const resolutionInput = z.object({
  outcome: z.enum(['committed', 'not_committed']).meta({ description: '`committed`: it happened at the provider; `not_committed`: it did not (safe to try again).' }),
  receipt: z.string().min(1).optional().meta({ description: 'The provider receipt you found (required for `committed`, e.g. ch_…).' }),
  reason: z.string({ error: 'a resolution needs a reason: say what you checked and where (the reason is kept in the ledger)' }).min(1, 'say what you checked and where (the reason is kept in the ledger)'),
}).strict().refine((r) => r.outcome !== 'committed' || r.receipt, { message: 'a committed resolution needs the provider receipt you found (e.g. ch_…)', path: ['receipt'] })
  .meta({ description: 'An operator\'s settlement of an escalated, terminal or unknown effect, with what they checked at the provider (kept in the ledger).' });

export const releaseInput = z.object({
  reason: z.string({ error: 'a release needs a reason: why this is a separate effect and not a duplicate' }).trim().min(1, 'a release needs a reason: why this is a separate effect and not a duplicate'),
}).strict().meta({ description: 'An operator\'s release of a held effect: why it is a separate effect and not a duplicate.' });

export const sagaStartInput = z.object({
  saga: z.string().min(1).meta({ description: 'The saga\'s name (GET /v1/sagas/definitions lists them).' }),
  workflowId: workflowIdField,
  input: sagaInputField,
  tenant: tenantField.optional(),
}).strict().meta({ description: 'Starts a saga; the same workflowId with the same input is the same saga.' });

/** A search as typed: matched, ignoring case, as a part of an id, a name or a target. */
const searchField = z.string().trim().min(1).max(256).meta({ description: 'Search: effects (or workflows) whose effect id (the reference), workflow id, tool, target or receipt contains this text, ignoring case. Open effects are searched completely, settled ones in the recent window.' });

export const effectListQuery = z.object({
  state: z.string().optional().meta({ description: 'Comma-separated states (e.g. `escalated,unknown`), or `attention` for what needs a human (escalated, terminal, unhandled duplicates).' }),
  tenant: tenantField.optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(100).meta({ description: 'At most this many effects per page.' }),
  /** Where the previous page ended: its `nextCursor`, passed back unchanged. */
  cursor: z.string().optional(),
  q: searchField.optional(),
});

export const workflowListQuery = z.object({
  tenant: tenantField.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50).meta({ description: 'At most this many workflows.' }),
  attention: z.enum(['1', 'true', '0', 'false']).optional().meta({ description: 'Only workflows with an effect only an operator can move.' }),
  saga: z.enum(['1', 'true', '0', 'false']).optional().meta({ description: 'Only saga runs, each with its saga\'s status (`sagaStatus`).' }),
  q: searchField.optional(),
  /** Where the previous page ended: its `nextCursor`, passed back unchanged. */
  cursor: z.string().optional()
    .meta({ description: 'The previous page\'s `nextCursor`, unchanged (with the same filters).' }),
});

export const duplicateHandlingInput = z.object({
  action: z.enum(['compensate', 'keep'], { error: 'action must be "compensate" (undo the extra object with the tool\'s undo) or "keep" (both stay, on purpose)' })
    .meta({ description: '`compensate`: undo the extra object with the tool\'s declared undo; `keep`: both stay, on purpose.' }),
  reason: z.string().trim().min(1, 'say why (the reason is kept in the ledger)'),
}).strict().meta({ description: 'An operator\'s decision about one extra object of a detected duplicate.' });
