import { z } from 'zod';
import { sagaCompensating, sagaFinished, sagaStarted } from './saga/saga-events.js';

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
  /** Who declared it: the authenticated credential (or `saga:<name>` for a saga's own steps). */
  principal: z.string(),
  /** What the payload claimed to act for (its "principal"): a label, never the actor. */
  onBehalfOf: z.string().optional(),
  repeat: z.object({ reason: z.string() }).optional(),
  /** Digest of tool + target + the tool's business fields: what the content index compares. */
  contentKey: z.string().optional(),
  /** W3C traceparent of the command that declared it (only when traces are exported): later checks join that trace. */
  traceparent: z.string().optional(),
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
  /** What the first attempt sent (path and body; no base URL, no headers): every resend sends exactly this. */
  request: z.object({ method: z.string(), path: z.string(), body: z.string(), encoding: z.enum(['json', 'form']), keyHeader: z.string().optional() }).strict().optional(),
});

export const attemptFinished = z.object({
  type: z.literal('AttemptFinished'),
  ...base,
  attempt: z.number().int().positive(),
  outcome: outcomeClass,
  receipt: z.string().optional(),
  httpStatus: z.number().int().optional(),
  /** The request provably never left (connection refused): nothing can have happened under this attempt. */
  neverSent: z.literal(true).optional(),
  replayed: z.boolean(),
  reason: z.string(),
  latencyMs: z.number().nonnegative(),
});

export const reconciliationChecked = z.object({
  type: z.literal('ReconciliationChecked'),
  ...base,
  method: z.enum(['lookup-by-key', 'lookup-by-reference', 'lookup-by-name']),
  /** When the lookup was sent (`at` is when its answer was recorded); absent on checks recorded before it was kept. */
  askedAt: z.number().int().nonnegative().optional(),
  asked: z.string(),
  seen: z.string(),
  /** `pending`: the provider answered and the effect is not (yet) there; `unanswered`: no usable answer (timeout, refused, 5xx, malformed), which proves nothing. */
  verdict: z.enum(['committed', 'not_committed', 'pending', 'unanswered']),
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

/** A new step matched an effect of the same business content that is done or still open: nothing is sent. */
export const effectHeld = z.object({
  type: z.literal('EffectHeld'),
  ...base,
  matchedEffectId: z.string(),
  matchedStep: z.string(),
  /** Set when the match is in another workflow of the tenant. */
  matchedWorkflowId: z.string().optional(),
  scope: z.enum(['workflow', 'tenant']),
  /** What matched: the same business content (default, as every v1 event before it), or the same tool + target while that effect is still open. */
  basis: z.enum(['content', 'target']).optional(),
});

/** An operator (or effectd, when the matched effect proved not to have happened) lets a held effect go. */
export const effectReleased = z.object({
  type: z.literal('EffectReleased'),
  ...base,
  releasedBy: z.string(),
  reason: z.string(),
});

/**
 * The one who declared an effect (or an operator) withdraws it before anything was sent (an MCP
 * `tasks/cancel`): it settles as not done, and nothing is ever sent for it. Only a never-dispatched
 * effect (declared, held) can be withdrawn: once sent, the world cannot be cancelled.
 */
export const effectWithdrawn = z.object({
  type: z.literal('EffectWithdrawn'),
  ...base,
  withdrawnBy: z.string(),
  reason: z.string(),
});

/**
 * After an effect settled through a same-key resend, a lookup of its stamped reference found more
 * than one object: the provider acted twice (it forgot the key sooner than its contract says).
 * `receipts` lists every object found, the effect's own receipt first.
 */
export const duplicateDetected = z.object({
  type: z.literal('DuplicateDetected'),
  ...base,
  receipts: z.array(z.string()).min(2),
  asked: z.string(),
  seen: z.string(),
});

/** The same audit found one object (or could not look: `unverifiable`, with what it saw). */
export const resendAudited = z.object({
  type: z.literal('ResendAudited'),
  ...base,
  verdict: z.enum(['single', 'unverifiable']),
  asked: z.string(),
  seen: z.string(),
});

/** An operator dealt with one extra object of a detected duplicate: compensated it (with the undo effect's id) or kept it, and why. */
export const duplicateHandled = z.object({
  type: z.literal('DuplicateHandled'),
  ...base,
  receipt: z.string(),
  action: z.enum(['compensated', 'kept']),
  handledBy: z.string(),
  reason: z.string(),
  compensationEffectId: z.string().optional(),
});

/**
 * The model's decision for a step, journaled by the harness before acting, so a resumed task
 * replays it instead of asking the model again. A workflow-level event: it names no effect.
 */
export const decisionRecorded = z.object({
  type: z.literal('DecisionRecorded'),
  v: z.literal(1),
  at: z.number().int().nonnegative(),
  step: z.string().min(1),
  tool: z.string().min(1),
  args: z.record(z.string(), z.unknown()),
  /** Which model (and prompt version) decided, for the people reading the timeline: a label the harness sends. */
  decidedBy: z.string().optional(),
  /** Who journaled it: the authenticated credential. */
  recordedBy: z.string().optional(),
});

/**
 * A proof of absence looked up once more, later (after the contract's absenceAuditMs): still not
 * there (`confirmed`), or the lookup did not answer (`unverifiable`).
 */
export const absenceAudited = z.object({
  type: z.literal('AbsenceAudited'),
  ...base,
  verdict: z.enum(['confirmed', 'unverifiable']),
  asked: z.string(),
  seen: z.string(),
});

/**
 * The audit of a proof of absence found the effect after all: its request reached the provider
 * after the settle window (a slow network, a queue in front of the provider). It happened.
 */
export const lateArrivalDetected = z.object({
  type: z.literal('LateArrivalDetected'),
  ...base,
  receipt: z.string(),
  asked: z.string(),
  seen: z.string(),
  /** When effectd had settled it not done (what the agent was told then). */
  provenAbsentAt: z.number().int().nonnegative(),
});

export const effectEvent = z.discriminatedUnion('type', [
  effectDeclared,
  attemptStarted,
  attemptFinished,
  reconciliationChecked,
  effectEscalated,
  effectResolved,
  effectHeld,
  effectReleased,
  effectWithdrawn,
  duplicateDetected,
  resendAudited,
  duplicateHandled,
  absenceAudited,
  lateArrivalDetected,
]);

export const ledgerEvent = z.discriminatedUnion('type', [...effectEvent.options, decisionRecorded, sagaStarted, sagaCompensating, sagaFinished]);

export type LedgerEvent = z.infer<typeof ledgerEvent>;
export type EffectEvent = z.infer<typeof effectEvent>;
export type WorkflowEvent = Exclude<LedgerEvent, EffectEvent>;
export type EffectHeld = z.infer<typeof effectHeld>;
export type EffectReleased = z.infer<typeof effectReleased>;
export type EffectWithdrawn = z.infer<typeof effectWithdrawn>;
export type DecisionRecorded = z.infer<typeof decisionRecorded>;
export type EffectDeclared = z.infer<typeof effectDeclared>;
export type AttemptStarted = z.infer<typeof attemptStarted>;
export type AttemptFinished = z.infer<typeof attemptFinished>;
export type ReconciliationChecked = z.infer<typeof reconciliationChecked>;
export type EffectEscalated = z.infer<typeof effectEscalated>;
export type EffectResolved = z.infer<typeof effectResolved>;
export type DuplicateDetected = z.infer<typeof duplicateDetected>;
export type ResendAudited = z.infer<typeof resendAudited>;
export type DuplicateHandled = z.infer<typeof duplicateHandled>;
export type AbsenceAudited = z.infer<typeof absenceAudited>;
export type LateArrivalDetected = z.infer<typeof lateArrivalDetected>;
export type LedgerEventType = LedgerEvent['type'];

export function isEffectEvent(event: LedgerEvent): event is EffectEvent {
  return 'effectId' in event;
}

/** Parses an event read back from storage; a malformed one is a corrupted ledger, never skipped. */
export function decodeLedgerEvent(type: string, data: unknown): LedgerEvent {
  return ledgerEvent.parse({ ...(data as object), type });
}
