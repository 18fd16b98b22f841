import { z } from 'zod';

/**
 * The ledger's vocabulary. Every event is versioned (`v`); a new version of an event gets a new
 * schema here and the fold learns to read both, so old ledgers keep folding.
 * `at` is epoch milliseconds of the writer's clock when the event was decided.
 */
const base = { v: z.literal(1), at: z.number().int().nonnegative(), effectId: z.string().min(1) };

export const outcomeClass = z.enum(['committed', 'failed_before_effect', 'terminal_failure', 'unknown']);
export type OutcomeClass = z.infer<typeof outcomeClass>;

export const effectDeclared = z.object({
  type: z.literal('EffectDeclared'),
  ...base,
  tenant: z.string(),
  workflowId: z.string(),
  step: z.string(),
  slot: z.string(),
  tool: z.string(),
  contractVersion: z.number().int(),
  intentDigest: z.string(),
  args: z.record(z.string(), z.unknown()),
  target: z.string(),
  principal: z.string(),
  repeat: z.object({ reason: z.string() }).optional(),
});

export const attemptStarted = z.object({
  type: z.literal('AttemptStarted'),
  ...base,
  attempt: z.number().int().positive(),
  instanceId: z.string(),
  providerKey: z.string().nullable(),
  /** Until when this claim is live; after it, the attempt's fate is unknown. */
  leaseUntil: z.number().int(),
  /** When the provider stops deduplicating this key (first dispatch + retention); null = no key protection. */
  keyExpiresAt: z.number().int().nullable(),
});

export const attemptFinished = z.object({
  type: z.literal('AttemptFinished'),
  ...base,
  attempt: z.number().int().positive(),
  outcome: outcomeClass,
  receipt: z.string().optional(),
  httpStatus: z.number().int().optional(),
  replayed: z.boolean(),
  reason: z.string(),
  latencyMs: z.number().nonnegative(),
});

export const reconciliationChecked = z.object({
  type: z.literal('ReconciliationChecked'),
  ...base,
  method: z.enum(['lookup-by-key', 'lookup-by-reference', 'lookup-by-name']),
  asked: z.string(),
  seen: z.string(),
  verdict: z.enum(['committed', 'not_committed', 'pending']),
  receipt: z.string().optional(),
});

export const effectEscalated = z.object({
  type: z.literal('EffectEscalated'),
  ...base,
  reason: z.string(),
  evidence: z.string(),
});

export const effectResolved = z.object({
  type: z.literal('EffectResolved'),
  ...base,
  resolvedBy: z.string(),
  outcome: z.enum(['committed', 'failed_before_effect']),
  receipt: z.string().optional(),
  reason: z.string(),
});

export const ledgerEvent = z.discriminatedUnion('type', [
  effectDeclared,
  attemptStarted,
  attemptFinished,
  reconciliationChecked,
  effectEscalated,
  effectResolved,
]);

export type LedgerEvent = z.infer<typeof ledgerEvent>;
export type EffectDeclared = z.infer<typeof effectDeclared>;
export type AttemptStarted = z.infer<typeof attemptStarted>;
export type AttemptFinished = z.infer<typeof attemptFinished>;
export type ReconciliationChecked = z.infer<typeof reconciliationChecked>;
export type EffectEscalated = z.infer<typeof effectEscalated>;
export type EffectResolved = z.infer<typeof effectResolved>;
export type LedgerEventType = LedgerEvent['type'];

/** Parses an event read back from storage; a malformed one is a corrupted ledger, never skipped. */
export function decodeLedgerEvent(type: string, data: unknown): LedgerEvent {
  return ledgerEvent.parse({ ...(data as object), type });
}
