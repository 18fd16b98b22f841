import type { AgentOutcome } from '../core/agent-outcome.js';
import { effectStatus, type EffectState } from '../core/effect-state.js';
import { decideSettleStep, type SettleProgress } from '../core/reconcile-decision.js';
import { reconcilePolicy, type Reconciler } from './reconciler.js';
import type { ShellCore } from './shell-core.js';

/** A live claim elsewhere is looked at this often: its dispatch may end long before its lease does. */
const CLAIM_POLL_MS = 50;
/** The budget's last look starts this long before it ends (at most a quarter of it), so its answer can still count. */
const LAST_LOOK_LEAD_MS = 150;

export interface InlineSettled {
  outcome: AgentOutcome;
  /** Wall-clock time the answer waited, in ms. */
  waitedMs: number;
}

/**
 * Inline settle: after a lost reply, the answer waits up to its budget while reconciliation runs
 * the steps the contract allows (decideSettleStep: a lookup, one same-key resend while the key
 * protects, re-checks on the reconciler's schedule), each taken and recorded by the reconciler as
 * it records its own. Settled in time → the answer is the settled outcome; otherwise it is
 * `unknown` as before, and the background reconciler goes on. A step still running when the budget
 * ends (a resend in flight) goes on and is recorded; only the answer stops waiting for it.
 */
export class InlineSettler {
  constructor(private readonly core: ShellCore, private readonly reconciler: Reconciler) {}

  /** Whether an answer about this effect has anything to wait for (a lost reply, a live claim, lookups due). */
  worthWaiting(effect: EffectState, ownDispatch: boolean): boolean {
    const tool = this.core.deps.tools.get(effect.declared.tool);
    return tool !== undefined && decideSettleStep(effect, this.core.now(), reconcilePolicy(tool), startOf(ownDispatch)).kind !== 'none';
  }

  /**
   * `ownDispatch`: this answer's own dispatch lost its reply, so the settle starts with a lookup and
   * one same-key resend. Otherwise (a resubmission that reconciled first already, a live claim
   * elsewhere) it only follows the reconciler's schedule, so one submission never resends twice.
   */
  async settle(stream: string, effectId: string, budgetMs: number, ownDispatch: boolean): Promise<InlineSettled> {
    const started = performance.now();
    const deadline = started + budgetMs;
    const stop = { stopped: false };
    // Another answer of this instance is settling it already: wait on that one, as on a claim.
    const owner = !this.reconciler.settling.has(effectId);
    if (owner) this.reconciler.settling.add(effectId);
    const lastLookAt = this.core.now() + budgetMs - Math.min(LAST_LOOK_LEAD_MS, budgetMs / 4);
    const work = (owner ? this.run(stream, effectId, deadline, { ...startOf(ownDispatch), lastLookAt }, stop) : this.watch(stream, effectId, deadline, stop))
      // A step that fails (or is still in flight when the budget ends) is the background reconciler's to take again.
      .catch((error: unknown) => console.error(`effectd inline settle: ${effectId}: ${(error as Error).message}`))
      .finally(() => {
        if (owner) this.reconciler.settling.delete(effectId);
      });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, budgetMs)))]);
    clearTimeout(timer);
    stop.stopped = true;
    const effect = (await this.core.read(stream)).effects.get(effectId)!;
    return { outcome: this.core.answer(effect, false), waitedMs: Math.round(performance.now() - started) };
  }

  private async run(stream: string, effectId: string, deadline: number, progress: SettleProgress, stop: { stopped: boolean }): Promise<void> {
    while (!stop.stopped) {
      const wait = await this.nextWait(stream, effectId, deadline, progress);
      if (wait === 'done') return;
      if (wait === 'act') await this.reconciler.step(stream, effectId, 'settle', progress);
      else await sleep(wait);
    }
  }

  /** Waits, without acting, until the effect has nothing left to wait for or the budget ends. */
  private async watch(stream: string, effectId: string, deadline: number, stop: { stopped: boolean }): Promise<void> {
    while (!stop.stopped && performance.now() < deadline) {
      const effect = (await this.core.read(stream)).effects.get(effectId);
      if (!effect || !this.worthWaiting(effect, false)) return;
      await sleep(CLAIM_POLL_MS);
    }
  }

  /** What the loop does next: act (the reconciler takes the step), sleep this many ms, or stop. */
  private async nextWait(stream: string, effectId: string, deadline: number, progress: SettleProgress): Promise<'done' | 'act' | number> {
    const effect = (await this.core.read(stream)).effects.get(effectId);
    const tool = effect && this.core.deps.tools.get(effect.declared.tool);
    if (!effect || !tool) return 'done';
    const now = this.core.now();
    const step = decideSettleStep(effect, now, reconcilePolicy(tool), progress);
    if (step.kind === 'none') return 'done';
    if (step.kind !== 'wait') return 'act';
    const left = deadline - performance.now();
    // A live claim is waited on, never taken over; a re-check due after the budget is the background reconciler's.
    if (effectStatus(effect, now) === 'dispatching') return left <= 0 ? 'done' : Math.max(1, Math.min(CLAIM_POLL_MS, left));
    return step.until - now >= left ? 'done' : Math.max(1, step.until - now);
  }
}

function startOf(ownDispatch: boolean): SettleProgress {
  return { lookedUp: !ownDispatch, resent: !ownDispatch };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
