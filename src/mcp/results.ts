import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { AgentOutcome } from '../core/agent-outcome.js';

/**
 * The three-state outcome as a tool result a model can't misread:
 * - `done` → `isError: false`, the receipt and the one-sentence message;
 * - `not_done` → `isError: true`, why, and that it is safe to try again as a new step;
 * - `unknown` → NEVER `isError` (an error invites a retry): the reference, when to expect the
 *   answer and "do not start another …", which the content-index hold enforces.
 */
export function outcomeResult(outcome: AgentOutcome): CallToolResult {
  const message = outcome.status === 'not_done' && !/try again|again to send it/.test(outcome.message)
    ? `${outcome.message} It is safe to try again as a new step.`
    : outcome.message;
  const structured = { ...outcome, message };
  return { isError: outcome.status === 'not_done', content: [{ type: 'text', text: message }], structuredContent: structured };
}

/** The `outputSchema` of every effect tool: the three-state outcome (src/core/agent-outcome.ts). */
export const outcomeSchema = z.looseObject({
  status: z.enum(['done', 'not_done', 'unknown']).describe('done: it happened (receipt); not_done: it did not, safe to try again as a new step; unknown: being checked, do not start another'),
  effectId: z.string().describe('the effect\'s id, stable across every retry'),
  state: z.string().describe('the ledger\'s state of the effect (committed, failed_before_effect, unknown, held, escalated, …)'),
  tool: z.string(),
  target: z.string(),
  receipt: z.string().optional().describe('provider evidence that the effect exists (done)'),
  reason: z.string().optional(),
  replayed: z.boolean().describe('answered from the ledger without calling the provider'),
  reference: z.string().optional().describe('unknown: the reference stamped into the effect; ask effectd_status with it'),
  checking: z.string().optional(),
  expectAnswerBy: z.string().optional().describe('unknown: when the answer is expected (ISO 8601)'),
  waitedMs: z.number().optional().describe('after a lost reply: how long this answer waited for effectd to settle it with the provider (ms)'),
  message: z.string().describe('one sentence for the model'),
});

/** `effectd_status`: the outcome plus where the effect sits and its evidence. */
export const statusSchema = outcomeSchema.extend({
  workflowId: z.string(),
  step: z.string(),
  slot: z.string(),
  evidence: z.array(z.looseObject({ at: z.string(), type: z.string(), summary: z.string() })),
});

/** `effectd_history`: each decided or executed step with its effects' outcomes (facts from the ledger). */
export const historySchema = z.looseObject({
  workflowId: z.string(),
  steps: z.array(z.looseObject({
    step: z.string(),
    decision: z.looseObject({ tool: z.string(), args: z.record(z.string(), z.unknown()) }).optional(),
    outcomes: z.array(z.looseObject({ slot: z.string(), effectId: z.string(), status: z.enum(['done', 'not_done', 'unknown']), receipt: z.string().optional(), message: z.string() })),
  })),
});
