import { canonicalJson } from './canonical-json.js';
import { findContentMatch, findTargetHold } from './content-index.js';
import { acceptsEvent, lifecycleOf, ONCE_TARGET_HOLDING_STATUSES, TARGET_HOLDING_STATUSES } from './effect-lifecycle.js';
import { absenceUnaudited, currentAttempt, effectStatus, needsAudit, type AttemptRecord, type EffectState } from './effect-state.js';
import type { DecisionRecorded } from './events.js';
import type { WorkflowState } from './fold.js';
import { absenceAuditAfterMs, askedAt, inFlightAnswer, keyStillProtects, nextLookup, resendVerdict, settleFrom, watchLookup, type ReconcilePolicy } from './reconcile-schedule.js';

/**
 * What a tool's contract says about an effect's life, computed once where tools are registered:
 * how it is reconciled, and whether effects on one target may run at once.
 */
export interface EffectPolicy extends ReconcilePolicy {
  /** Many effects per target at once are normal for this tool: no target hold while one is open. */
  concurrentTargets: boolean;
  /** `one`: the target takes one committed effect (an invoice is paid once); a new one is held as already done unless a declared repeat. */
  committedPerTarget: 'one' | 'many';
}

/** A submitted command, as the decider needs it. */
export interface Submission {
  effectId: string;
  intentDigest: string;
  /** What the digest is made of, to know a command identical to the recorded one whatever the contract version now is. */
  tool: string;
  target: string;
  args: Record<string, unknown>;
  step: string;
  /** A declared repeat is never held by the content or target rules. */
  repeat: boolean;
  contentKey: string | undefined;
  /** `targetKeyOf(tool, target)`. */
  targetKey: string;
  /** The step's journaled decision (the model decided this step before) and whether this command is it. */
  journal?: { matches: true } | { matches: false; decision: DecisionRecorded };
}

/** What an inline run has done so far (it starts afresh for every answer). */
export interface Progress {
  lookedUp: boolean;
  resent: boolean;
  /** When the answer's budget is nearly spent: one last look then, if the schedule's next one comes later. */
  lastLookAt?: number;
}

/**
 * What the decision needs from outside the workflow's own stream, read by the runner BEFORE it
 * decides (the decider does no I/O). Absent means "not read": when it matters, the decider asks
 * for it with a `read` step and is called again.
 */
export interface Lookaside {
  /** The tenant content window's match for a new effect (null: looked, nothing matched). */
  tenantMatch?: { effect: EffectState } | null;
  /** Effects of other workflows a held effect waits on, by effect id (undefined: read, and not there). */
  holders?: ReadonlyMap<string, EffectState | undefined>;
}

export type Mode =
  /** An agent's command: replay, refuse, hold, claim, or reconcile first (one lookup, one same-key resend). */
  | { kind: 'submit'; submission: Submission; workflow: WorkflowState; progress: Progress; tenantWindow: boolean }
  /** The answer waits, within its budget, for a lost reply to settle (docs/inline-settle.md). */
  | { kind: 'settle'; progress: Progress }
  /** The background reconciler's schedule: lookups with backoff, resends, proofs of absence, escalation, audits. */
  | { kind: 'reconcile' }
  /** What an operator asked for, or (`withdraw`, an MCP tasks/cancel) the one who declared the effect. */
  | { kind: 'operator'; action: OperatorAction };

/** An action on one effect from outside effectd: an operator's release or resolution, or a withdrawal before anything was sent. */
export type OperatorAction = 'release' | 'resolve' | 'withdraw';

/** Where an effect a new step matches was found, and on what basis. */
export interface Hold {
  holder: EffectState;
  scope: 'workflow' | 'tenant';
  basis: 'content' | 'target';
}

/** The one next step for one effect. */
export type Step =
  /** Answer the submission with the effect as it stands (`final`: no later event can change this answer). */
  | { kind: 'answer'; as: 'replayed' | 'in-flight' | 'held' | 'unsettled'; final?: boolean; holder?: EffectState }
  /** Nothing to take now (reconcile, settle): the background reconciler, or a human, goes on. */
  | { kind: 'none' }
  /** The command is refused: nothing is recorded. `recorded`: the effect the command conflicts with, as it stands. */
  | { kind: 'refuse'; code: 'intent_conflict' | 'illegal_transition'; message: string; details: Record<string, unknown>; recorded?: EffectState }
  /** Claim a new attempt (declaring the effect first when it is new), then dispatch it once. */
  | { kind: 'claim'; declare: boolean }
  /** Declare the effect held behind another: never sent unless released. */
  | ({ kind: 'hold' } & Hold)
  /** Let a held effect go (then decide again): by effectd (what it waited on did not happen), the agent (a declared repeat) or an operator. */
  | { kind: 'release'; why: string; by: 'effectd' | 'agent' | 'operator' }
  | { kind: 'lookup' }
  /** A same-key resend: the provider dedupes the key and the contract allows another. */
  | { kind: 'resend' }
  /** Look it up once more: settled through a resend (`resend`: a second object?), or proven absent (`absence`: did it arrive late?). */
  | { kind: 'audit'; of: 'resend' | 'absence' }
  | { kind: 'escalate'; reason: string }
  | { kind: 'prove-not-committed'; why: string }
  | { kind: 'wait'; until: number; why: string }
  /** An operator's resolution may be recorded. */
  | { kind: 'resolve' }
  /** Nothing was sent: the effect may be withdrawn (settled not done, never sent). */
  | { kind: 'withdraw' }
  /** Read this first, then decide again. */
  | { kind: 'read'; what: 'tenant-content' }
  | { kind: 'read'; what: 'holder'; workflowId: string; effectId: string };

export interface StepInput {
  /** The effect as folded (undefined: never declared). */
  effect: EffectState | undefined;
  policy: EffectPolicy;
  now: number;
  mode: Mode;
  lookaside?: Lookaside;
}

/**
 * The decider: what happens next to one effect, in every mode, from the folded state and what was
 * read for it beforehand. Pure: no I/O, the time is an argument. The runner (src/shell/effect-runner.ts)
 * carries the step out and calls it again on what the step left.
 */
export function nextStep(input: StepInput): Step {
  switch (input.mode.kind) {
    case 'submit':
      return submissionStep(input, input.mode);
    case 'settle':
      return input.effect ? settleStep(input.effect, input.now, input.policy, input.mode.progress) : { kind: 'none' };
    case 'reconcile':
      return input.effect ? reconcileStep(input.effect, input.now, input.policy) : { kind: 'none' };
    case 'operator':
      return operatorStep(input, input.mode.action);
  }
}

function submissionStep({ effect, policy, now, lookaside = {} }: StepInput, mode: Extract<Mode, { kind: 'submit' }>): Step {
  const { submission, workflow } = mode;
  // A step the model already decided runs as decided.
  if (submission.journal && !submission.journal.matches) {
    const { decision } = submission.journal;
    // A new step is offered only when this step's effect is absent or proven not to have happened.
    const newStepOk = !effect || lifecycleOf(effectStatus(effect, now)).agent === 'not_done';
    return { kind: 'refuse', code: 'intent_conflict', message: `was decided as ${decision.tool} ${JSON.stringify(decision.args)}; submit the recorded decision (GET …/decisions)${newStepOk ? ' or decide a new step' : ''}`, details: { step: decision.step, decision, journal: true }, ...(effect ? { recorded: effect } : {}) };
  }
  if (!effect) return newEffectStep(workflow, policy, now, mode, lookaside);
  if (effect.declared.intentDigest !== submission.intentDigest && !sameIntent(effect, submission)) {
    return { kind: 'refuse', code: 'intent_conflict', message: 'was declared with other arguments', details: { effectId: effect.effectId, recordedDigest: effect.declared.intentDigest, submittedDigest: submission.intentDigest }, recorded: effect };
  }
  const status = effectStatus(effect, now);
  switch (status) {
    case 'committed':
      // Never changes: final, so a warm cache answers it unread.
      return { kind: 'answer', as: 'replayed', final: true };
    case 'failed_before_effect':
      // Final once nothing can find it later: a proof of absence not audited yet may still turn into a late arrival.
      return absenceUnaudited(effect) ? { kind: 'answer', as: 'replayed' } : { kind: 'answer', as: 'replayed', final: true };
    case 'terminal_failure':
    case 'escalated':
      return { kind: 'answer', as: 'replayed' };
    case 'declared':
      return { kind: 'claim', declare: false };
    case 'held':
      return heldStep(effect, workflow, now, lookaside, submission.repeat);
    case 'dispatching':
      return { kind: 'answer', as: 'in-flight' };
    case 'unknown': {
      // Reconcile first, never dispatch blindly: one lookup, then a same-key resend while the key protects.
      const first = mode.progress.resent ? { kind: 'none' as const } : firstSteps(effect, now, policy, mode.progress.lookedUp);
      return first.kind === 'none' ? { kind: 'answer', as: 'unsettled' } : first;
    }
  }
}

/** A new step: held when it repeats a done or open effect (content, then target), else claimed. */
function newEffectStep(workflow: WorkflowState, policy: EffectPolicy, now: number, mode: Extract<Mode, { kind: 'submit' }>, lookaside: Lookaside): Step {
  const { submission } = mode;
  if (submission.repeat) return { kind: 'claim', declare: true };
  if (submission.contentKey) {
    const ids = workflow.byContent.get(submission.contentKey) ?? [];
    const local = findContentMatch(ids.map((id) => workflow.effects.get(id)!), submission.contentKey, submission.effectId, now);
    if (local) return { kind: 'hold', holder: local, scope: 'workflow', basis: 'content' };
    if (mode.tenantWindow) {
      if (lookaside.tenantMatch === undefined) return { kind: 'read', what: 'tenant-content' };
      if (lookaside.tenantMatch) return { kind: 'hold', holder: lookaside.tenantMatch.effect, scope: 'tenant', basis: 'content' };
    }
  }
  // Slots of one step are declared together on purpose (one-to-many): they never hold each other.
  const others = (workflow.byTarget.get(submission.targetKey) ?? []).map((id) => workflow.effects.get(id)!).filter((e) => e.declared.step !== submission.step);
  // While an effect on the target may have happened and is not settled: "do not start another".
  const open = policy.concurrentTargets ? undefined : findTargetHold(others, submission.effectId, now, TARGET_HOLDING_STATUSES);
  if (open) return { kind: 'hold', holder: open, scope: 'workflow', basis: 'target' };
  // A target that takes one committed effect, and has it: already done.
  const done = policy.committedPerTarget === 'one' ? findTargetHold(others, submission.effectId, now, ONCE_TARGET_HOLDING_STATUSES) : undefined;
  if (done) return { kind: 'hold', holder: done, scope: 'workflow', basis: 'target' };
  return { kind: 'claim', declare: true };
}

/** The command is the recorded one (same tool, target and canonical arguments) under another contract version. */
function sameIntent(effect: EffectState, submission: Submission): boolean {
  const { declared } = effect;
  return declared.tool === submission.tool && declared.target === submission.target && canonicalJson(declared.args) === canonicalJson(submission.args);
}

/**
 * A held effect is never sent by a release: it stays held until what it waits on is proven not to
 * have happened (then it may go, under the usual rules), or the agent declares the repeat.
 */
function heldStep(effect: EffectState, workflow: WorkflowState, now: number, lookaside: Lookaside, repeat: boolean): Step {
  const by = effect.heldBy!;
  if (repeat) return { kind: 'release', why: 'the agent declared it a repeat', by: 'agent' };
  let holder: EffectState | undefined;
  if (by.workflowId) {
    holder = lookaside.holders?.get(by.effectId);
    if (!holder && !lookaside.holders?.has(by.effectId)) return { kind: 'read', what: 'holder', workflowId: by.workflowId, effectId: by.effectId };
  } else holder = workflow.effects.get(by.effectId);
  const provenAbsent = !holder || lifecycleOf(effectStatus(holder, now)).agent === 'not_done';
  if (!provenAbsent) return { kind: 'answer', as: 'held', holder };
  return { kind: 'release', by: 'effectd', why: `step ${by.step}${by.basis === 'target' ? ' on the same target' : ' with the same content'} did not happen${holder ? ` (${effectStatus(holder, now)})` : ''}` };
}

/**
 * The reconciler's next step for one open effect (docs/design.md, "Reconciliation"): look it up; not
 * found → re-check with backoff until the settle window passes; then resend with the same key
 * only while the provider still remembers it; otherwise prove absence or hand it to a human.
 */
function reconcileStep(effect: EffectState, now: number, policy: ReconcilePolicy, watch = true): Step {
  const status = effectStatus(effect, now);
  const attempt = currentAttempt(effect);
  if (status === 'dispatching') return { kind: 'wait', until: attempt!.started.leaseUntil, why: 'a live claim is in flight' };
  if (status === 'terminal_failure') return attempt ? lookUpPoisoned(effect, attempt, now, policy, watch) : { kind: 'none' };
  // With a human, and still looked up: evidence that appears later settles it without one.
  if (status === 'escalated') return watch ? watchLookup(effect, escalatedAt(effect), now, policy) : { kind: 'none' };
  if (needsAudit(effect)) {
    const settledBy = settleFrom(attempt!) + policy.settleWindowMs;
    return now >= settledBy ? { kind: 'audit', of: 'resend' } : { kind: 'wait', until: settledBy, why: 'settled through a resend: audited for a second object once the lookup has settled' };
  }
  // Every proof of absence is looked up once more, later: a request may reach the provider after the window.
  if (absenceUnaudited(effect)) {
    const due = effect.settledAt! + absenceAuditAfterMs(policy);
    return now >= due ? { kind: 'audit', of: 'absence' } : { kind: 'wait', until: due, why: 'proven absent: looked up once more later, for a request that arrived after the settle window' };
  }
  if (status !== 'unknown' || !attempt) return { kind: 'none' };
  const resend = resendVerdict(effect, now, policy);
  if (policy.lookup !== 'none') {
    const next = nextLookup(effect, attempt, now, policy);
    if (next.kind === 'unanswered') {
      if (resend.allowed) return { kind: 'resend' };
      if (resend.waitUntil !== undefined) return { kind: 'wait', until: resend.waitUntil, why: resend.why };
      return { kind: 'escalate', reason: `the provider's ${policy.lookup} lookup did not answer the ${next.looks} looks after the settle window, so nothing proves whether it happened, and ${resend.why}` };
    }
    if (next.kind !== 'settled') return next;
    if (resend.allowed) return { kind: 'resend' };
    if (resend.waitUntil !== undefined) return { kind: 'wait', until: resend.waitUntil, why: resend.why };
    // A "still in progress" answer proves a request under the key reached the provider: absence is never proven then.
    const reached = effect.attempts.some(inFlightAnswer);
    if (policy.lookupConsistent && !reached) return { kind: 'prove-not-committed', why: `not found by a consistent ${policy.lookup} lookup after the ${policy.settleWindowMs} ms settle window` };
    return { kind: 'escalate', reason: reached ? `the provider said a request under this key was being processed (409), not found by ${policy.lookup} lookup since, and ${resend.why}` : `not found by ${policy.lookup} lookup after the settle window, the lookup may lag, and ${resend.why}` };
  }
  if (resend.allowed) return { kind: 'resend' };
  if (resend.waitUntil !== undefined) return { kind: 'wait', until: resend.waitUntil, why: resend.why };
  const noKey = effect.attempts[0]?.started.providerKey === null;
  return { kind: 'escalate', reason: noKey ? 'the tool has neither an idempotency key nor a lookup: only a human can tell whether it happened' : `the tool has no lookup and ${resend.why}: only a human can tell whether it happened` };
}

/**
 * A replayed stored failure poisons the key: nothing is sent again. But the provider may have
 * committed before it stored the failure, so looking up (a safe read) goes on through the settle
 * window; found → committed. After it, the effect stays with a human.
 */
function lookUpPoisoned(effect: EffectState, attempt: AttemptRecord, now: number, policy: ReconcilePolicy, watch: boolean): Step {
  if (policy.lookup === 'none') return { kind: 'none' };
  const next = nextLookup(effect, attempt, now, policy);
  if (next.kind !== 'settled' && next.kind !== 'unanswered') return next;
  return watch ? watchLookup(effect, settleFrom(attempt) + policy.settleWindowMs, now, policy) : { kind: 'none' };
}

/** When the effect was escalated (its last escalation). */
function escalatedAt(effect: EffectState): number {
  return effect.log.findLast((e) => e.type === 'EffectEscalated')?.at ?? effect.lastEventAt;
}

/**
 * After a resubmission of an unknown effect: one lookup, then a resend with the same key only if
 * the key still protects it. Settle windows, proofs of absence and escalation stay with the schedule.
 */
function firstSteps(effect: EffectState, now: number, policy: ReconcilePolicy, lookedUp: boolean): Step {
  const status = effectStatus(effect, now);
  if (status === 'dispatching') return { kind: 'wait', until: currentAttempt(effect)!.started.leaseUntil, why: 'a live claim is in flight' };
  if (status !== 'unknown') return { kind: 'none' };
  if (policy.lookup !== 'none' && !lookedUp) return { kind: 'lookup' };
  if (keyStillProtects(effect, now, policy)) return { kind: 'resend' };
  return { kind: 'none' };
}

/**
 * The next step of an inline settle: first what a resubmission does (one lookup, then one same-key
 * resend while the key protects and the provider dedupes), then the reconciler's own schedule:
 * re-checks with backoff, a proof of absence only once the settle window has passed. A live claim
 * is waited on, never taken over. `none` once settled or when only the background (or a human)
 * can go on; escalations and audits stay with the background reconciler.
 */
function settleStep(effect: EffectState, now: number, policy: ReconcilePolicy, progress: Progress): Step {
  const status = effectStatus(effect, now);
  if (status !== 'unknown' && status !== 'dispatching' && status !== 'terminal_failure') return { kind: 'none' };
  if (!progress.resent) {
    const first = firstSteps(effect, now, policy, progress.lookedUp);
    if (first.kind !== 'none') return first;
  }
  // The slow watch after effectd's own schedule is the background's, never an answer's wait.
  const next = reconcileStep(effect, now, policy, false);
  if (next.kind === 'escalate' || next.kind === 'audit') return { kind: 'none' };
  // A lookup is a safe read: rather than answer with a check the schedule would take only after
  // the budget, take one last look as it ends (once: a check at or after lastLookAt is that look).
  const last = progress.lastLookAt;
  if (next.kind === 'wait' && last !== undefined && next.until > last && status !== 'dispatching' && policy.lookup !== 'none') {
    const latest = effect.checks[effect.checks.length - 1];
    if (!latest || askedAt(latest) < last) return now >= last ? { kind: 'lookup' } : { kind: 'wait', until: last, why: 'one last look before the answer budget ends' };
  }
  return next;
}

function operatorStep({ effect, now }: StepInput, action: OperatorAction): Step {
  if (!effect) return { kind: 'refuse', code: 'illegal_transition', message: 'no such effect', details: {} };
  const status = effectStatus(effect, now);
  const row = lifecycleOf(status);
  switch (action) {
    case 'release':
      return row.releasable ? { kind: 'release', why: 'released by an operator', by: 'operator' } : { kind: 'refuse', code: 'illegal_transition', message: `effect ${effect.effectId} is ${status}, not held`, details: { effectId: effect.effectId, status } };
    case 'withdraw':
      // The table says where nothing was sent (declared, held); anything claimed may be in the world.
      return acceptsEvent(status, 'EffectWithdrawn') && effect.attempts.length === 0
        ? { kind: 'withdraw' }
        : { kind: 'refuse', code: 'illegal_transition', message: `effect ${effect.effectId} is ${status}: it was sent (or claimed to be sent) to the provider, and the world cannot be cancelled; effectd settles it`, details: { effectId: effect.effectId, status } };
    case 'resolve':
      break;
  }
  return row.resolvable ? { kind: 'resolve' } : { kind: 'refuse', code: 'illegal_transition', message: `effect ${effect.effectId} is ${status}: only an escalated, terminal or unknown effect can be resolved`, details: { effectId: effect.effectId, status } };
}

/**
 * effectd's own schedule still has a step to take for it (a poisoned key inside its settle window):
 * not a human's yet. The slow watch that goes on afterwards does not count.
 */
export function stillLooking(effect: EffectState, now: number, policy: ReconcilePolicy): boolean {
  return reconcileStep(effect, now, policy, false).kind !== 'none';
}
