import { currentAttempt, effectStatus, type EffectState } from '../core/effect-state.js';
import { isEffectdError } from '../core/errors.js';
import type { LedgerEvent, ReconciliationChecked } from '../core/events.js';
import { decideInlineReconcile, decideReconcile, type ReconcilePolicy, type ReconcileStep } from '../core/reconcile-decision.js';
import type { WorkflowState } from '../core/fold.js';
import type { LookupResult } from '../providers/http-provider.js';
import type { Tool } from '../providers/tool-registry.js';
import { MAX_RACES, type PreparedEffect, type ShellAnswer, type ShellCore } from './shell-core.js';

export function reconcilePolicy(tool: Tool): ReconcilePolicy {
  const lookup = tool.spec.lookup;
  return {
    lookup: lookup.by,
    lookupConsistent: lookup.by !== 'none' && lookup.consistent,
    dedupesByKey: tool.keyPolicy.dedupesByKey,
    settleWindowMs: tool.spec.settleWindowMs,
  };
}

const METHOD = { key: 'lookup-by-key', reference: 'lookup-by-reference', name: 'lookup-by-name' } as const;

/**
 * Resolves unknown effects against the world (DESIGN.md, "Reconciliation"). Every check is an
 * event; a resend happens only with the same key while the provider still remembers it.
 * `scheduled` follows backoff and settle windows; `inline` is the shell's reconcile-first when an
 * agent resubmits an unknown effect.
 */
export class Reconciler {
  constructor(private readonly core: ShellCore) {}

  /** Takes the next step for one effect; answers with where it stands afterwards. */
  async step(stream: string, effectId: string, mode: 'scheduled' | 'inline'): Promise<ShellAnswer | undefined> {
    let lookedUp = false;
    for (let race = 0; race < MAX_RACES; race++) {
      const workflow = await this.core.read(stream);
      const effect = workflow.effects.get(effectId);
      if (!effect) return undefined;
      const prepared = this.core.prepared(effect, stream);
      if (!prepared) return { outcome: this.core.answer(effect, true), disposition: 'held-unknown' };
      const now = this.core.now();
      const policy = reconcilePolicy(prepared.tool);
      const step: ReconcileStep = mode === 'scheduled' ? decideReconcile(effect, now, policy) : decideInlineReconcile(effect, now, policy, lookedUp);
      try {
        switch (step.kind) {
          case 'none':
          case 'wait':
            return { outcome: this.core.answer(effect, true), disposition: effectStatus(effect, now) === 'dispatching' ? 'in-flight' : 'held-unknown' };
          case 'lookup': {
            lookedUp = true;
            const checked = await this.lookup(prepared, effect, workflow, policy);
            const next = await this.record(stream, workflow, effect, checked);
            if (checked.verdict === 'committed' || mode === 'scheduled') return { outcome: this.core.answer(next, false), disposition: 'reconciled' };
            continue;
          }
          case 'retry-same-key': {
            const answer = await this.core.claimAndDispatch(prepared, workflow, effect);
            if (!answer) continue;
            return answer;
          }
          case 'not-committed': {
            const proof: ReconciliationChecked = { type: 'ReconciliationChecked', v: 1, at: now, effectId, method: METHOD[policy.lookup as keyof typeof METHOD], asked: 'the settle window has passed', seen: step.why, verdict: 'not_committed' };
            return { outcome: this.core.answer(await this.record(stream, workflow, effect, proof), false), disposition: 'reconciled' };
          }
          case 'escalate': {
            const evidence = effect.checks.map((c) => `${new Date(c.at).toISOString()} ${c.method}: ${c.seen}`).join('; ') || 'no lookup possible';
            const next = await this.record(stream, workflow, effect, { type: 'EffectEscalated', v: 1, at: now, effectId, reason: step.reason, evidence });
            this.core.metrics.escalated(prepared.tool.name);
            return { outcome: this.core.answer(next, false), disposition: 'reconciled' };
          }
        }
      } catch (error) {
        if (isEffectdError(error, 'concurrency_conflict')) continue;
        throw error;
      }
    }
    throw new Error(`effect ${effectId}: reconciliation lost ${MAX_RACES} races on ${stream}`);
  }

  private async lookup(prepared: PreparedEffect, effect: EffectState, workflow: WorkflowState, policy: ReconcilePolicy): Promise<ReconciliationChecked> {
    const attempt = currentAttempt(effect)!.started;
    const result: LookupResult = await this.core.looker(prepared.tool, this.core.dispatchInput(prepared, attempt.providerKey));
    const base = { type: 'ReconciliationChecked' as const, v: 1 as const, at: this.core.now(), effectId: effect.effectId, method: METHOD[policy.lookup as keyof typeof METHOD] };
    if (result.kind === 'unsupported') return { ...base, asked: 'nothing (no lookup)', seen: 'unsupported', verdict: 'pending' };
    if (result.kind !== 'found') return { ...base, asked: result.asked, seen: result.seen, verdict: 'pending' };
    // A key or a stamped reference names this effect alone. A name is not unique: only a match no
    // other effect of this workflow already owns can be this one's.
    const owned = policy.lookup === 'name' ? new Set([...workflow.effects.values()].filter((e) => e.effectId !== effect.effectId && e.receipt).map((e) => e.receipt!)) : new Set<string>();
    const receipt = result.receipts.find((r) => !owned.has(r));
    if (!receipt) return { ...base, asked: result.asked, seen: `${result.seen}, all owned by other effects`, verdict: 'pending' };
    return { ...base, asked: result.asked, seen: result.seen, verdict: 'committed', receipt };
  }

  private async record(stream: string, workflow: WorkflowState, effect: EffectState, event: LedgerEvent): Promise<EffectState> {
    const next = (await this.core.append(stream, workflow, [event])).effects.get(effect.effectId)!;
    if (event.type === 'ReconciliationChecked') this.core.metrics.reconciliationCheck(effect.declared.tool, event.verdict);
    if (next.settledAt !== undefined && next.unknownSince !== undefined) this.core.metrics.leftUnknown(effect.declared.tool, next.settledAt - next.unknownSince);
    return next;
  }
}
