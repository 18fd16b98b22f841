import { describe, expect, it } from 'vitest';
import { resolveAnswerBudget, DEFAULT_ANSWER_BUDGET } from '../../src/core/answer-budget.js';
import { loadSettings } from '../../src/config/settings-loader.js';
import { findTargetHold } from '../../src/core/content-index.js';
import { isEffectdError } from '../../src/core/errors.js';
import type { EffectEvent } from '../../src/core/events.js';
import { foldWorkflow } from '../../src/core/fold.js';
import { appliedWait, preferredWaitMs } from '../../src/core/prefer-wait.js';
import type { Progress as SettleProgress } from '../../src/core/next-step.js';
import type { ReconcilePolicy } from '../../src/core/reconcile-schedule.js';
import { settleStep as decideSettleStep } from '../support/decide.js';
import { effectdConfigSpec } from '../../src/config/tool-contract.js';
import { declared, finished, started } from '../support/events.js';

const E = 'eff_settle';
/** Stripe-like: a search that lags (not consistent), a key it dedupes for 24 h, a 120 s settle window. */
const stripe: ReconcilePolicy = { lookup: 'reference', lookupConsistent: false, dedupesByKey: true, settleWindowMs: 120_000, resends: { max: 3, withinMs: 3_600_000 } };
const fresh = (): SettleProgress => ({ lookedUp: false, resent: false });
const effectOf = (events: EffectEvent[]) => foldWorkflow(events).effects.get(E)!;
const check = (at: number, verdict: 'pending' | 'committed' | 'not_committed' = 'pending'): EffectEvent =>
  ({ type: 'ReconciliationChecked', v: 1, at, effectId: E, method: 'lookup-by-reference', asked: 'search', seen: verdict, verdict, ...(verdict === 'committed' ? { receipt: 'ch_1' } : {}) });
/** Dispatched at t=1000, reply lost at t=1100. */
const lost = (overrides: Parameters<typeof started>[3] = {}) => [declared(E), started(E, 1, 1_000, overrides), finished(E, 1, 1_100, 'unknown')];

describe('decideSettleStep: the inline settle reuses the reconciler\'s rules', () => {
  it('after a lost reply it looks up first, then resends once under the same key while the key protects', () => {
    const effect = effectOf(lost());
    expect(decideSettleStep(effect, 1_100, stripe, fresh())).toEqual({ kind: 'lookup' });
    const looked = effectOf([...lost(), check(1_110)]);
    expect(decideSettleStep(looked, 1_120, stripe, { lookedUp: true, resent: false })).toEqual({ kind: 'resend' });
  });

  it('a lookup that finds nothing proves nothing while the settle window is open, even a consistent one', () => {
    const consistent: ReconcilePolicy = { ...stripe, lookupConsistent: true, dedupesByKey: false };
    const looked = effectOf([...lost({ providerKey: null, keyExpiresAt: null }), check(1_110)]);
    const progress = { lookedUp: true, resent: false };
    for (const now of [1_120, 1_400, 60_000, 120_999, 121_099]) {
      const step = decideSettleStep(looked, now, consistent, progress);
      expect(step.kind, `at ${now}`).not.toBe('prove-not-committed');
      expect(['wait', 'lookup']).toContain(step.kind);
    }
    // Only a look taken after the window ends proves absence; the window counts from the moment
    // effectd stopped waiting (the reply was lost at t=1100), not from the dispatch.
    const early = effectOf([...lost({ providerKey: null, keyExpiresAt: null }), check(1_110), check(121_000)]);
    expect(decideSettleStep(early, 121_001, consistent, progress).kind).not.toBe('prove-not-committed');
    const after = effectOf([...lost({ providerKey: null, keyExpiresAt: null }), check(1_110), check(121_100)]);
    expect(decideSettleStep(after, 121_101, consistent, progress)).toMatchObject({ kind: 'prove-not-committed' });
  });

  it('never resends after the key expired', () => {
    const expired = effectOf([...lost({ keyExpiresAt: 1_050 }), check(1_110)]);
    for (const now of [1_120, 200_000]) expect(decideSettleStep(expired, now, stripe, { lookedUp: true, resent: false }).kind).not.toBe('resend');
  });

  it('never resends when the provider does not dedupe, or the key is spent (a resend was refused) or poisoned', () => {
    const noDedupe = { ...stripe, dedupesByKey: false };
    expect(decideSettleStep(effectOf([...lost(), check(1_110)]), 1_120, noDedupe, { lookedUp: true, resent: false }).kind).not.toBe('resend');
    const refusedResend: EffectEvent = { type: 'AttemptFinished', v: 1, at: 1_300, effectId: E, attempt: 2, outcome: 'failed_before_effect', httpStatus: 400, replayed: false, reason: 'refused', latencyMs: 1 };
    // A refused resend proves nothing about the first dispatch, and spends the key: lookups only.
    const spent = effectOf([...lost(), started(E, 2, 1_200), refusedResend]);
    expect(decideSettleStep(spent, 1_400, stripe, fresh())).toEqual({ kind: 'lookup' });
    expect(decideSettleStep(effectOf([...lost(), started(E, 2, 1_200), refusedResend, check(1_410)]), 1_420, stripe, { lookedUp: true, resent: false }).kind).toBe('wait');
    const poisoned = effectOf([...lost(), started(E, 2, 1_200), finished(E, 2, 1_250, 'terminal_failure')]);
    for (const now of [1_260, 1_600, 5_000]) expect(['lookup', 'wait'], `at ${now}`).toContain(decideSettleStep(poisoned, now, stripe, { lookedUp: true, resent: true }).kind);
  });

  it('a live claim elsewhere is waited on, never taken over (no lookup, no resend while it lasts)', () => {
    const claimed = effectOf([...lost(), check(1_110), started(E, 2, 1_200, { instanceId: 'other', leaseUntil: 8_200 })]);
    for (const progress of [fresh(), { lookedUp: true, resent: false }, { lookedUp: true, resent: true, lastLookAt: 2_000 }]) {
      expect(decideSettleStep(claimed, 1_300, stripe, progress)).toMatchObject({ kind: 'wait', until: 8_200 });
    }
  });

  it('resends once, then follows the reconciler\'s schedule: re-checks with backoff, no second resend inside the window', () => {
    const resent = effectOf([...lost(), check(1_110), started(E, 2, 1_200), finished(E, 2, 1_300, 'unknown'), check(1_310)]);
    const progress = { lookedUp: true, resent: true };
    expect(decideSettleStep(resent, 1_320, stripe, progress)).toMatchObject({ kind: 'wait', until: 1_560 });
    expect(decideSettleStep(resent, 1_560, stripe, progress)).toEqual({ kind: 'lookup' });
  });

  it('one last look as the budget ends when the schedule\'s next one comes after it, once', () => {
    const resent = effectOf([...lost(), check(1_110), started(E, 2, 1_200), finished(E, 2, 1_300, 'unknown'), check(1_310), check(1_560), check(2_060)]);
    const progress = { lookedUp: true, resent: true, lastLookAt: 2_900 };
    expect(decideSettleStep(resent, 2_100, stripe, progress)).toMatchObject({ kind: 'wait', until: 2_900 });
    expect(decideSettleStep(resent, 2_900, stripe, progress)).toEqual({ kind: 'lookup' });
    const looked = effectOf([...lost(), check(1_110), started(E, 2, 1_200), finished(E, 2, 1_300, 'unknown'), check(1_310), check(1_560), check(2_060), check(2_905)]);
    expect(decideSettleStep(looked, 2_910, stripe, progress)).toMatchObject({ kind: 'wait', until: 2_905 + 2_000 });
  });

  it('stops once settled, and leaves escalation to the background reconciler (the answer stays today\'s unknown)', () => {
    expect(decideSettleStep(effectOf([declared(E), started(E, 1, 1_000), finished(E, 1, 1_100, 'committed', 'ch_1')]), 1_200, stripe, fresh())).toEqual({ kind: 'none' });
    const weak: ReconcilePolicy = { lookup: 'none', lookupConsistent: false, dedupesByKey: false, settleWindowMs: 10_000, resends: { max: 3, withinMs: 3_600_000 } };
    expect(decideSettleStep(effectOf(lost({ providerKey: null, keyExpiresAt: null })), 1_200, weak, fresh())).toEqual({ kind: 'none' });
  });

  it('the hold on the target still applies to new steps while the effect is being settled', () => {
    const open = effectOf([...lost(), check(1_110), started(E, 2, 1_200)]);
    expect(findTargetHold([open], 'eff_next_step', 1_300)?.effectId).toBe(E);
    expect(findTargetHold([effectOf(lost())], 'eff_next_step', 1_300)?.effectId).toBe(E);
  });
});

describe('the answer budget', () => {
  const payments = { timeoutMs: 5_000 };
  it('defaults to the global budget within the tool\'s timeout plus the margin; the contract\'s own wins', () => {
    expect(resolveAnswerBudget(payments, DEFAULT_ANSWER_BUDGET)).toEqual({ ms: 2_000, requested: false });
    expect(resolveAnswerBudget({ timeoutMs: 100 }, { defaultMs: 5_000, maxMs: 10_000 })).toEqual({ ms: 2_100, requested: false });
    expect(resolveAnswerBudget({ timeoutMs: 5_000, answerBudgetMs: 0 }, DEFAULT_ANSWER_BUDGET)).toEqual({ ms: 0, requested: false });
  });

  it('a caller asks for less or more, up to the cap; wait=0 is today\'s behaviour', () => {
    expect(resolveAnswerBudget(payments, DEFAULT_ANSWER_BUDGET, 0)).toEqual({ ms: 0, requested: true });
    expect(resolveAnswerBudget(payments, DEFAULT_ANSWER_BUDGET, 7_000)).toEqual({ ms: 7_000, requested: true });
    expect(resolveAnswerBudget(payments, { defaultMs: 2_000, maxMs: 3_000 }, 60_000)).toEqual({ ms: 3_000, requested: true });
  });

  it('the environment is read once with clear errors', () => {
    const answerBudgetSettings = (env: Record<string, string>) => loadSettings(env).answerBudget;
    expect(answerBudgetSettings({})).toEqual({ defaultMs: 2_000, maxMs: 10_000 });
    expect(answerBudgetSettings({ EFFECTD_ANSWER_BUDGET_MS: '0' })).toEqual({ defaultMs: 0, maxMs: 10_000 });
    expect(answerBudgetSettings({ EFFECTD_ANSWER_BUDGET_MAX_MS: '500' })).toEqual({ defaultMs: 500, maxMs: 500 });
    expect(() => answerBudgetSettings({ EFFECTD_ANSWER_BUDGET_MS: '2s' })).toThrow(/EFFECTD_ANSWER_BUDGET_MS must be a whole number of milliseconds ≥ 0 .*, not "2s"/);
    expect(() => answerBudgetSettings({ EFFECTD_ANSWER_BUDGET_MS: '5000', EFFECTD_ANSWER_BUDGET_MAX_MS: '1000' })).toThrow(/above EFFECTD_ANSWER_BUDGET_MAX_MS/);
    let refused: unknown;
    try {
      answerBudgetSettings({ EFFECTD_ANSWER_BUDGET_MAX_MS: '-1' });
    } catch (error) {
      refused = error;
    }
    expect(isEffectdError(refused, 'invalid_config')).toBe(true);
  });

  it('a contract whose answerBudgetMs is longer than its timeout plus the margin is refused at load, naming the field', () => {
    const tool = (extra: Record<string, unknown>) => ({ tools: [{ name: 'x.y', provider: 'p', args: { a: { type: 'string' } }, target: '{args.a}', reversibility: 'compensable', idempotency: { kind: 'none' }, timeoutMs: 1_000, ...extra }] });
    expect(effectdConfigSpec.safeParse(tool({ answerBudgetMs: 3_000 })).success).toBe(true);
    const refused = effectdConfigSpec.safeParse(tool({ answerBudgetMs: 3_001 }));
    expect(refused.success).toBe(false);
    expect(refused.error!.issues[0]).toMatchObject({ path: ['tools', 0, 'answerBudgetMs'] });
    expect(refused.error!.issues[0]!.message).toMatch(/longer than the tool's timeoutMs \(1000\) plus 2000 ms/);
  });

  it('Prefer: wait=N (RFC 7240) in seconds; one that is not understood is ignored', () => {
    expect(preferredWaitMs(undefined)).toBeUndefined();
    expect(preferredWaitMs('wait=3')).toBe(3_000);
    expect(preferredWaitMs('respond-async, wait=0')).toBe(0);
    expect(preferredWaitMs('Wait = "2"; foo')).toBe(2_000);
    expect(preferredWaitMs(['return=minimal', 'wait=1'])).toBe(1_000);
    expect(preferredWaitMs('wait=soon')).toBeUndefined();
    expect(preferredWaitMs('wait=-1')).toBeUndefined();
    expect(preferredWaitMs('waitfor=1')).toBeUndefined();
    expect(appliedWait(10_000)).toBe('wait=10');
    expect(appliedWait(0)).toBe('wait=0');
  });
});
