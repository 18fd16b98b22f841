import { afterAll, describe, expect, it } from 'vitest';
import { acceptsEvent, EFFECT_STATUSES, LIFECYCLE, type EffectEventType } from '../../src/core/effect-lifecycle.js';
import { effectStatus, type EffectState, type EffectStatus } from '../../src/core/effect-state.js';
import { isEffectdError } from '../../src/core/errors.js';
import type { EffectEvent } from '../../src/core/events.js';
import { foldWorkflow, type WorkflowState } from '../../src/core/fold.js';
import { nextStep, type EffectPolicy, type Lookaside, type Mode, type Progress, type Step, type Submission } from '../../src/core/next-step.js';
import { declared, finished, started } from '../support/events.js';

/**
 * Decider specifications (the style of Emmett's deciderSpecification): given the events of a
 * workflow, when a mode, then one step. No I/O, no clock. Every status of the lifecycle table has
 * specs here (the last test checks it), and every event a row does not accept is refused by the fold.
 */

const E = 'eff_a';
const OTHER = 'eff_b';
/** Stripe-like: a lagging reference search, a key it dedupes for a day, a 1 s settle window. */
const stripe: EffectPolicy = { lookup: 'reference', lookupConsistent: false, dedupesByKey: true, settleWindowMs: 1_000, resends: { max: 3, withinMs: 3_600_000 }, concurrentTargets: false, committedPerTarget: 'many' };
const noLookupNoKey: EffectPolicy = { lookup: 'none', lookupConsistent: false, dedupesByKey: false, settleWindowMs: 1_000, resends: { max: 3, withinMs: 3_600_000 }, concurrentTargets: false, committedPerTarget: 'many' };

const seen = new Set<EffectStatus | 'new'>();

interface When {
  mode: 'submit' | 'settle' | 'reconcile' | 'release' | 'resolve' | 'withdraw';
  now: number;
  policy?: EffectPolicy;
  progress?: Progress;
  submission?: Partial<Submission>;
  lookaside?: Lookaside;
  tenantWindow?: boolean;
  effectId?: string;
}

function given(events: EffectEvent[]) {
  const workflow: WorkflowState = foldWorkflow(events);
  return {
    when(w: When): Step {
      const effectId = w.effectId ?? E;
      const effect: EffectState | undefined = workflow.effects.get(effectId);
      seen.add(effect ? effectStatus(effect, w.now) : 'new');
      const submission: Submission = { effectId, intentDigest: 'digest-a', tool: 'payments.charge', target: 'inv-1', args: { amount: 4900, currency: 'usd' }, step: effect?.declared.step ?? '2', repeat: false, contentKey: 'content-1', targetKey: 'payments.charge\ninv-1', ...w.submission };
      const progress = w.progress ?? { lookedUp: false, resent: false };
      const mode: Mode = w.mode === 'submit' ? { kind: 'submit', submission, workflow, progress, tenantWindow: w.tenantWindow ?? false }
        : w.mode === 'settle' ? { kind: 'settle', progress }
          : w.mode === 'reconcile' ? { kind: 'reconcile' } : { kind: 'operator', action: w.mode };
      return nextStep({ effect, policy: w.policy ?? stripe, now: w.now, mode, ...(w.lookaside ? { lookaside: w.lookaside } : {}) });
    },
  };
}

const decl = (id = E, overrides = {}) => declared(id, 1_000, { contentKey: 'content-1', ...overrides });
const lost = (id = E) => [decl(id), started(id, 1, 1_100), finished(id, 1, 1_200, 'unknown')];
const committed = (id = E) => [decl(id), started(id, 1, 1_100), finished(id, 1, 1_200, 'committed', 'ch_1')];
const held = (basis: 'content' | 'target', matchedWorkflowId?: string): Extract<EffectEvent, { type: 'EffectHeld' }> => ({
  type: 'EffectHeld', v: 1, at: 1_300, effectId: OTHER, matchedEffectId: E, matchedStep: '1', scope: matchedWorkflowId ? 'tenant' : 'workflow',
  ...(matchedWorkflowId ? { matchedWorkflowId } : {}), ...(basis === 'target' ? { basis } : {}),
});
const heldBehind = (first: EffectEvent[], basis: 'content' | 'target') => [...first, decl(OTHER, { step: '2', at: 1_300 }), held(basis)];
const escalated = (id = E): EffectEvent => ({ type: 'EffectEscalated', v: 1, at: 1_500, effectId: id, reason: 'test', evidence: 'none' });

describe('nextStep, a submission', () => {
  it('(new) a new step is claimed, declared first', () => {
    expect(given([]).when({ mode: 'submit', now: 1_000 })).toEqual({ kind: 'claim', declare: true });
  });
  it('(new) a new step with the content of a committed one is held, and so is one on a target that is still unknown', () => {
    expect(given(committed()).when({ mode: 'submit', now: 2_000, effectId: OTHER })).toMatchObject({ kind: 'hold', basis: 'content', scope: 'workflow' });
    expect(given(lost()).when({ mode: 'submit', now: 2_000, effectId: OTHER, submission: { contentKey: 'content-2' } })).toMatchObject({ kind: 'hold', basis: 'target' });
  });
  it('(new) a declared repeat is never held; a tool with concurrent targets has no target hold', () => {
    expect(given(committed()).when({ mode: 'submit', now: 2_000, effectId: OTHER, submission: { repeat: true } })).toEqual({ kind: 'claim', declare: true });
    expect(given(lost()).when({ mode: 'submit', now: 2_000, effectId: OTHER, submission: { contentKey: 'content-2' }, policy: { ...stripe, concurrentTargets: true } })).toEqual({ kind: 'claim', declare: true });
  });
  it('(new) with a tenant content window the decider asks for its match before deciding, and holds on it', () => {
    const other = foldWorkflow(committed()).effects.get(E)!;
    expect(given([]).when({ mode: 'submit', now: 1_000, effectId: OTHER, tenantWindow: true })).toEqual({ kind: 'read', what: 'tenant-content' });
    expect(given([]).when({ mode: 'submit', now: 1_000, effectId: OTHER, tenantWindow: true, lookaside: { tenantMatch: { effect: other } } })).toMatchObject({ kind: 'hold', scope: 'tenant', basis: 'content' });
    expect(given([]).when({ mode: 'submit', now: 1_000, effectId: OTHER, tenantWindow: true, lookaside: { tenantMatch: null } })).toEqual({ kind: 'claim', declare: true });
  });
  it('a step the model decided otherwise is refused, before anything else', () => {
    const decision = { type: 'DecisionRecorded' as const, v: 1 as const, at: 900, step: '2', tool: 'payments.charge', args: { amount: 1 }, recordedBy: 'agent' };
    expect(given([]).when({ mode: 'submit', now: 1_000, submission: { journal: { matches: false, decision } } })).toMatchObject({ kind: 'refuse', code: 'intent_conflict' });
  });
  it('(declared) a declared effect is claimed', () => {
    expect(given([decl()]).when({ mode: 'submit', now: 1_050 })).toEqual({ kind: 'claim', declare: false });
  });
  it('(dispatching) a live claim answers in flight', () => {
    expect(given([decl(), started(E, 1, 1_100)]).when({ mode: 'submit', now: 1_200 })).toEqual({ kind: 'answer', as: 'in-flight' });
  });
  it('(unknown) reconcile first: a lookup, then a same-key resend while the key protects, else the answer as it stands', () => {
    expect(given(lost()).when({ mode: 'submit', now: 1_300 })).toEqual({ kind: 'lookup' });
    expect(given(lost()).when({ mode: 'submit', now: 1_300, progress: { lookedUp: true, resent: false } })).toEqual({ kind: 'resend' });
    expect(given(lost()).when({ mode: 'submit', now: 1_300, policy: noLookupNoKey })).toEqual({ kind: 'answer', as: 'unsettled' });
  });
  it('(unknown) a changed intent is refused, with the recorded effect to say where it stands', () => {
    const refused = given(lost()).when({ mode: 'submit', now: 1_300, submission: { intentDigest: 'digest-b', args: { amount: 5000, currency: 'usd' } } });
    expect(refused).toMatchObject({ kind: 'refuse', code: 'intent_conflict' });
    expect(refused.kind === 'refuse' && refused.recorded?.effectId).toBe(E);
  });
  it('(unknown, committed) the identical command under another contract version is the recorded effect, never a conflict', () => {
    // Same tool, target and canonical arguments; the digest differs only by the contract version.
    expect(given(lost()).when({ mode: 'submit', now: 1_300, submission: { intentDigest: 'digest-v2' } })).toEqual({ kind: 'lookup' });
    expect(given(committed()).when({ mode: 'submit', now: 2_000, submission: { intentDigest: 'digest-v2' } })).toEqual({ kind: 'answer', as: 'replayed', final: true });
  });
  it('(committed, failed_before_effect) answered from the ledger, final', () => {
    expect(given(committed()).when({ mode: 'submit', now: 2_000 })).toEqual({ kind: 'answer', as: 'replayed', final: true });
    expect(given([decl(), started(E, 1, 1_100), finished(E, 1, 1_200, 'failed_before_effect')]).when({ mode: 'submit', now: 2_000 })).toEqual({ kind: 'answer', as: 'replayed', final: true });
  });
  it('(escalated, terminal_failure) answered from the ledger, not final: a human or a lookup may still settle it', () => {
    expect(given([...lost(), escalated()]).when({ mode: 'submit', now: 2_000 })).toEqual({ kind: 'answer', as: 'replayed' });
    expect(given([decl(), started(E, 1, 1_100), finished(E, 1, 1_200, 'terminal_failure')]).when({ mode: 'submit', now: 2_000 })).toEqual({ kind: 'answer', as: 'replayed' });
  });
  it('(held) never sent by a release: it stays held while what it waits on may have happened or did, whatever the basis', () => {
    const resolved = (outcome: 'committed' | 'failed_before_effect'): EffectEvent => ({ type: 'EffectResolved', v: 1, at: 1_500, effectId: E, resolvedBy: 'op', outcome, reason: 'seen' });
    expect(given(heldBehind(lost(), 'content')).when({ mode: 'submit', now: 1_400, effectId: OTHER })).toMatchObject({ kind: 'answer', as: 'held' });
    expect(given(heldBehind(committed(), 'content')).when({ mode: 'submit', now: 1_400, effectId: OTHER })).toMatchObject({ kind: 'answer', as: 'held' });
    expect(given([...heldBehind(lost(), 'target'), resolved('committed')]).when({ mode: 'submit', now: 1_600, effectId: OTHER })).toMatchObject({ kind: 'answer', as: 'held' });
    // Only what is proven not to have happened lets it go, under the usual rules.
    expect(given([...heldBehind(lost(), 'target'), resolved('failed_before_effect')]).when({ mode: 'submit', now: 1_600, effectId: OTHER })).toMatchObject({ kind: 'release' });
    expect(given([...heldBehind(lost(), 'content'), resolved('failed_before_effect')]).when({ mode: 'submit', now: 1_600, effectId: OTHER })).toMatchObject({ kind: 'release' });
  });
  it('(held) a declared repeat on a new submission of the held step sends it', () => {
    expect(given(heldBehind(committed(), 'target')).when({ mode: 'submit', now: 1_400, effectId: OTHER, submission: { repeat: true } })).toMatchObject({ kind: 'release' });
  });
  it('(new) a target that takes one committed effect, and has it, holds a new step as already done; a declared repeat goes', () => {
    const once: EffectPolicy = { ...stripe, committedPerTarget: 'one' };
    const other = { effectId: OTHER, submission: { contentKey: 'content-2', intentDigest: 'digest-b' } };
    expect(given(committed()).when({ mode: 'submit', now: 2_000, policy: once, ...other })).toMatchObject({ kind: 'hold', basis: 'target', holder: { effectId: E } });
    expect(given(committed()).when({ mode: 'submit', now: 2_000, policy: stripe, ...other })).toEqual({ kind: 'claim', declare: true });
    expect(given(committed()).when({ mode: 'submit', now: 2_000, policy: once, effectId: OTHER, submission: { contentKey: 'content-2', repeat: true } })).toEqual({ kind: 'claim', declare: true });
    // A target whose effect proved absent takes a new one.
    expect(given([decl(), started(E, 1, 1_100), finished(E, 1, 1_200, 'failed_before_effect')]).when({ mode: 'submit', now: 2_000, policy: once, ...other })).toEqual({ kind: 'claim', declare: true });
  });
  it('(held) held behind another workflow\'s effect: the decider asks for it first', () => {
    const events = [decl(OTHER, { step: '2', at: 1_300 }), held('content', 'wf-other')];
    expect(given(events).when({ mode: 'submit', now: 1_400, effectId: OTHER })).toEqual({ kind: 'read', what: 'holder', workflowId: 'wf-other', effectId: E });
    const holder = foldWorkflow(lost()).effects.get(E)!;
    expect(given(events).when({ mode: 'submit', now: 1_400, effectId: OTHER, lookaside: { holders: new Map([[E, holder]]) } })).toMatchObject({ kind: 'answer', as: 'held' });
  });
});

describe('nextStep, the scheduled reconcile', () => {
  it('(declared, committed, failed_before_effect) nothing to do', () => {
    expect(given([decl()]).when({ mode: 'reconcile', now: 1_050 })).toEqual({ kind: 'none' });
    expect(given(committed()).when({ mode: 'reconcile', now: 2_000 })).toEqual({ kind: 'none' });
  });
  it('(dispatching) waits for the lease', () => {
    expect(given([decl(), started(E, 1, 1_100)]).when({ mode: 'reconcile', now: 1_200 })).toMatchObject({ kind: 'wait', until: 6_100 });
  });
  it('(unknown) looks up; with no lookup and a protecting key, resends; with neither, escalates', () => {
    expect(given(lost()).when({ mode: 'reconcile', now: 1_300 })).toEqual({ kind: 'lookup' });
    expect(given(lost()).when({ mode: 'reconcile', now: 1_300, policy: { ...noLookupNoKey, dedupesByKey: true } })).toEqual({ kind: 'resend' });
    expect(given([decl(), started(E, 1, 1_100, { providerKey: null, keyExpiresAt: null }), finished(E, 1, 1_200, 'unknown')]).when({ mode: 'reconcile', now: 1_300, policy: noLookupNoKey })).toMatchObject({ kind: 'escalate' });
  });
  it('(unknown) a consistent lookup that found nothing after the settle window proves absence', () => {
    const consistent: EffectPolicy = { ...stripe, lookupConsistent: true, dedupesByKey: false };
    const check = (at: number): EffectEvent => ({ type: 'ReconciliationChecked', v: 1, at, askedAt: at, effectId: E, method: 'lookup-by-reference', asked: 'search', seen: 'none', verdict: 'pending' });
    expect(given([...lost(), check(2_300)]).when({ mode: 'reconcile', now: 2_400, policy: consistent })).toMatchObject({ kind: 'prove-not-committed' });
  });
  it('(committed) settled through a resend: audited once the lookup has settled', () => {
    const resent = [...lost(), started(E, 2, 1_300), finished(E, 2, 1_400, 'committed', 'ch_1')];
    expect(given(resent).when({ mode: 'reconcile', now: 1_500 })).toMatchObject({ kind: 'wait', until: 2_400 });
    expect(given(resent).when({ mode: 'reconcile', now: 2_400 })).toEqual({ kind: 'audit', of: 'resend' });
  });
  it('(terminal_failure) looked up through its settle window, never re-sent', () => {
    const poisoned = [decl(), started(E, 1, 1_100), finished(E, 1, 1_200, 'terminal_failure')];
    expect(given(poisoned).when({ mode: 'reconcile', now: 1_300 })).toEqual({ kind: 'lookup' });
    expect(given(poisoned).when({ mode: 'reconcile', now: 1_300, policy: noLookupNoKey })).toEqual({ kind: 'none' });
  });
  it('(escalated) still looked up, on a slowing schedule, until the key is no longer retained', () => {
    const esc = [...lost(), escalated()];
    // Escalated at 1,500; the first look one settle window (1 s) later, then 2 s, 4 s… after the last one.
    expect(given(esc).when({ mode: 'reconcile', now: 2_000 })).toMatchObject({ kind: 'wait', until: 2_500 });
    expect(given(esc).when({ mode: 'reconcile', now: 2_500 })).toEqual({ kind: 'lookup' });
    const looked = [...esc, { type: 'ReconciliationChecked', v: 1, at: 2_510, askedAt: 2_500, effectId: E, method: 'lookup-by-reference', asked: 'search', seen: 'none', verdict: 'pending' } as EffectEvent];
    expect(given(looked).when({ mode: 'reconcile', now: 2_600 })).toMatchObject({ kind: 'wait', until: 4_500 });
    // The key (retained a day from the first dispatch) bounds it; a tool with no lookup has nothing to watch.
    expect(given(looked).when({ mode: 'reconcile', now: 1_100 + 86_400_000 })).toEqual({ kind: 'none' });
    expect(given(esc).when({ mode: 'reconcile', now: 2_500, policy: noLookupNoKey })).toEqual({ kind: 'none' });
  });
  it('(escalated) an inline settle never waits for the slow watch', () => {
    expect(given([...lost(), escalated()]).when({ mode: 'settle', now: 2_500 })).toEqual({ kind: 'none' });
  });
  it('(held) nothing the schedule does', () => {
    expect(given(heldBehind(lost(), 'content')).when({ mode: 'reconcile', now: 1_400, effectId: OTHER })).toEqual({ kind: 'none' });
  });
  it('(unknown) a 409 "still in progress" is evidence, not a resend: no cap spent, the next resend waits for the holder, and absence is never proven', () => {
    const busy = (n: number, at: number): EffectEvent[] => [started(E, n, at), { ...finished(E, n, at + 10, 'unknown'), httpStatus: 409 } as EffectEvent];
    const oneResend: EffectPolicy = { ...stripe, resends: { max: 1, withinMs: 3_600_000 }, lookup: 'none' };
    const after409s = [...lost(), ...busy(2, 1_300), ...busy(3, 2_000), ...busy(4, 3_000)];
    // Three 409s and resends.max 1: still allowed, after the holder's wait (500 ms doubling per 409 in a row: 2 s after the third).
    expect(given(after409s).when({ mode: 'reconcile', now: 3_100, policy: oneResend })).toMatchObject({ kind: 'wait', until: 5_010 });
    expect(given(after409s).when({ mode: 'reconcile', now: 5_010, policy: oneResend })).toEqual({ kind: 'resend' });
    // A consistent lookup that finds nothing proves nothing once the provider said the key was in use.
    const consistent: EffectPolicy = { ...stripe, lookupConsistent: true, dedupesByKey: false };
    const check = (at: number): EffectEvent => ({ type: 'ReconciliationChecked', v: 1, at, askedAt: at, effectId: E, method: 'lookup-by-reference', asked: 'search', seen: 'none', verdict: 'pending' });
    expect(given([...lost(), ...busy(2, 1_300), check(2_400)]).when({ mode: 'reconcile', now: 2_500, policy: consistent })).toMatchObject({ kind: 'escalate' });
  });
});

describe('nextStep, an inline settle', () => {
  it('(unknown) after its own lost reply: a lookup, then one resend, then the schedule', () => {
    expect(given(lost()).when({ mode: 'settle', now: 1_300 })).toEqual({ kind: 'lookup' });
    expect(given(lost()).when({ mode: 'settle', now: 1_300, progress: { lookedUp: true, resent: false } })).toEqual({ kind: 'resend' });
  });
  it('(dispatching) a live claim is waited on; (committed) nothing to wait for', () => {
    expect(given([decl(), started(E, 1, 1_100)]).when({ mode: 'settle', now: 1_200 })).toMatchObject({ kind: 'wait' });
    expect(given(committed()).when({ mode: 'settle', now: 2_000 })).toEqual({ kind: 'none' });
  });
});

describe('nextStep, an operator\'s action', () => {
  it('(held) releasable; (unknown, escalated, terminal_failure) resolvable; anything else refused', () => {
    expect(given(heldBehind(lost(), 'content')).when({ mode: 'release', now: 1_400, effectId: OTHER })).toMatchObject({ kind: 'release' });
    expect(given(lost()).when({ mode: 'resolve', now: 1_300 })).toEqual({ kind: 'resolve' });
    expect(given([...lost(), escalated()]).when({ mode: 'resolve', now: 2_000 })).toEqual({ kind: 'resolve' });
    expect(given(committed()).when({ mode: 'resolve', now: 2_000 })).toMatchObject({ kind: 'refuse', code: 'illegal_transition' });
    expect(given(committed()).when({ mode: 'release', now: 2_000 })).toMatchObject({ kind: 'refuse', code: 'illegal_transition' });
  });
  it('(declared, held) withdrawable, nothing was sent; (dispatching, unknown, committed) refused: the world cannot be cancelled', () => {
    expect(given([decl()]).when({ mode: 'withdraw', now: 1_000 })).toEqual({ kind: 'withdraw' });
    expect(given(heldBehind(lost(), 'content')).when({ mode: 'withdraw', now: 1_400, effectId: OTHER })).toEqual({ kind: 'withdraw' });
    expect(given([decl(), started(E, 1, 1_100)]).when({ mode: 'withdraw', now: 1_200 })).toMatchObject({ kind: 'refuse', code: 'illegal_transition', message: expect.stringMatching(/world cannot be cancelled/) });
    expect(given(lost()).when({ mode: 'withdraw', now: 1_300 })).toMatchObject({ kind: 'refuse', code: 'illegal_transition' });
    expect(given(committed()).when({ mode: 'withdraw', now: 2_000 })).toMatchObject({ kind: 'refuse', code: 'illegal_transition' });
  });
  it('a withdrawn effect is not done for good: a re-submission replays it, nothing is claimed', () => {
    const withdrawn: EffectEvent = { type: 'EffectWithdrawn', v: 1, at: 1_100, effectId: E, withdrawnBy: 'agent', reason: 'MCP tasks/cancel' };
    const state = foldWorkflow([decl(), withdrawn]).effects.get(E)!;
    expect(state).toMatchObject({ recordedStatus: 'failed_before_effect', withdrawnBy: 'agent', attempts: [] });
    expect(given([decl(), withdrawn]).when({ mode: 'submit', now: 1_200 })).toMatchObject({ kind: 'answer', as: 'replayed' });
    expect(given([decl(), withdrawn]).when({ mode: 'reconcile', now: 100_000 })).toEqual({ kind: 'none' });
  });
});

/** A history that brings effect E to each status (at t=2,000 for the lease). */
const reach: Record<EffectStatus, EffectEvent[]> = {
  declared: [decl()],
  held: [decl(OTHER, { step: '0' }), started(OTHER, 1, 900), decl(E, { at: 1_000 }), { ...held('content'), effectId: E, matchedEffectId: OTHER, at: 1_000 }],
  dispatching: [decl(), started(E, 1, 1_900)],
  unknown: lost(),
  escalated: [...lost(), escalated()],
  committed: committed(),
  failed_before_effect: [decl(), started(E, 1, 1_100), finished(E, 1, 1_200, 'failed_before_effect')],
  terminal_failure: [decl(), started(E, 1, 1_100), finished(E, 1, 1_200, 'terminal_failure')],
};

/** One event of each type for effect E, as plausible as the type allows. */
const example: Record<Exclude<EffectEventType, 'EffectDeclared'>, (state: EffectState) => EffectEvent> = {
  EffectHeld: () => ({ ...held('content'), effectId: E, matchedEffectId: OTHER, at: 2_000 }),
  EffectReleased: () => ({ type: 'EffectReleased', v: 1, at: 2_000, effectId: E, releasedBy: 'op', reason: 'test' }),
  EffectWithdrawn: () => ({ type: 'EffectWithdrawn', v: 1, at: 2_000, effectId: E, withdrawnBy: 'agent', reason: 'test' }),
  AttemptStarted: (s) => started(E, s.attempts.length + 1, 2_000),
  AttemptFinished: (s) => finished(E, Math.max(1, s.attempts.length), 2_000, 'committed', 'ch_9'),
  ReconciliationChecked: () => ({ type: 'ReconciliationChecked', v: 1, at: 2_000, effectId: E, method: 'lookup-by-reference', asked: 'search', seen: 'found', verdict: 'committed', receipt: 'ch_9' }),
  EffectEscalated: () => escalated(),
  EffectResolved: () => ({ type: 'EffectResolved', v: 1, at: 2_000, effectId: E, resolvedBy: 'op', outcome: 'committed', reason: 'seen' }),
  DuplicateDetected: () => ({ type: 'DuplicateDetected', v: 1, at: 2_000, effectId: E, receipts: ['ch_1', 'ch_2'], asked: 'search', seen: 'two' }),
  ResendAudited: () => ({ type: 'ResendAudited', v: 1, at: 2_000, effectId: E, verdict: 'single', asked: 'search', seen: 'one' }),
  AbsenceAudited: () => ({ type: 'AbsenceAudited', v: 1, at: 2_000, effectId: E, verdict: 'confirmed', asked: 'search', seen: 'none' }),
  LateArrivalDetected: () => ({ type: 'LateArrivalDetected', v: 1, at: 2_000, effectId: E, receipt: 'ch_9', asked: 'search', seen: 'one', provenAbsentAt: 1_200 }),
  DuplicateHandled: () => ({ type: 'DuplicateHandled', v: 1, at: 2_000, effectId: E, receipt: 'ch_2', action: 'kept', handledBy: 'op', reason: 'test' }),
};

describe('the lifecycle table is what the fold enforces', () => {
  for (const status of EFFECT_STATUSES) {
    it(`(${status}) every event the row does not accept is refused with illegal_transition`, () => {
      const state = foldWorkflow(reach[status]).effects.get(E)!;
      expect(effectStatus(state, 2_000)).toBe(status);
      for (const [type, make] of Object.entries(example) as [keyof typeof example, (s: EffectState) => EffectEvent][]) {
        if (acceptsEvent(status, type)) continue;
        let error: unknown;
        try {
          foldWorkflow([make(state)], foldWorkflow(reach[status]));
        } catch (e) {
          error = e;
        }
        expect(isEffectdError(error, 'illegal_transition'), `${type} in ${status}`).toBe(true);
      }
    });
  }

  it('the rows are consistent: open ⇔ not settled for good; a resolvable status is open; a releasable one is held', () => {
    for (const status of EFFECT_STATUSES) {
      const row = LIFECYCLE[status];
      if (row.resolvable) expect(row.open, status).toBe(true);
      if (row.human !== 'no') expect(row.open, status).toBe(true);
      if (row.inProgress) expect(row.open, status).toBe(true);
      expect(row.releasable, status).toBe(status === 'held');
      expect(row.agent === 'done', status).toBe(status === 'committed');
    }
  });
});

afterAll(() => {
  // Every status of the table has at least one decider specification above.
  const missing = EFFECT_STATUSES.filter((s) => !seen.has(s));
  if (missing.length > 0) throw new Error(`no decider specification for status(es): ${missing.join(', ')}`);
});
