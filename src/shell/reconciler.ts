import { currentAttempt, effectStatus, type EffectState } from '../core/effect-state.js';
import type { DuplicateDetected, EffectEscalated, ReconciliationChecked, ResendAudited } from '../core/events.js';
import { askedAt, decideInlineReconcile, decideReconcile, decideSettleStep, type ReconcilePolicy, type ReconcileStep, type SettleProgress } from '../core/reconcile-decision.js';
import type { WorkflowState } from '../core/fold.js';
import type { LookupResult } from '../providers/http-provider.js';
import type { Tool } from '../providers/tool-registry.js';
import { accepts, type PreparedEffect, type ShellAnswer, type ShellCore } from './shell-core.js';
import type { Decision } from './workflow-store.js';
import { checkAttributes, inSpan, SPAN, SpanKind } from '../tracing/index.js';

/** Rounds of one reconciliation step: an inline lookup or a lost resend claim adds one. */
const MAX_ROUNDS = 4;

export function reconcilePolicy(tool: Tool): ReconcilePolicy {
  // A tool of an upstream MCP server declares its lookup (a read-only upstream tool) under mcp.
  const lookup = tool.spec.mcp ? (tool.spec.mcp.lookup ?? { by: 'none' as const }) : tool.spec.lookup;
  return {
    lookup: lookup.by,
    lookupConsistent: lookup.by !== 'none' && lookup.consistent,
    dedupesByKey: tool.keyPolicy.dedupesByKey,
    settleWindowMs: tool.spec.settleWindowMs,
    resends: tool.spec.resends,
  };
}

const METHOD = { key: 'lookup-by-key', reference: 'lookup-by-reference', name: 'lookup-by-name' } as const;

/**
 * Resolves unknown effects against the world (docs/design.md, "Reconciliation"). Every check is an
 * event; a resend happens only with the same key while the provider still remembers it.
 * `scheduled` follows backoff and settle windows; `inline` is the shell's reconcile-first when an
 * agent resubmits an unknown effect.
 */
export class Reconciler {
  /** Effects an answer is settling inline in this instance: the background worker leaves them to it meanwhile. */
  readonly settling = new Set<string>();

  constructor(private readonly core: ShellCore) {}

  /**
   * Takes the next step for one effect; answers with where it stands afterwards. `settle` is one
   * step of an inline settle (src/shell/inline-settle.ts), which keeps its progress across steps.
   */
  async step(stream: string, effectId: string, mode: 'scheduled' | 'inline' | 'settle', progress: SettleProgress = { lookedUp: false, resent: false }): Promise<ShellAnswer | undefined> {
    // Each round decides on the state as it is now; a lookup (inline) or a lost resend claim leads to one more.
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const workflow = await this.core.read(stream);
      const effect = workflow.effects.get(effectId);
      if (!effect) return undefined;
      const prepared = this.core.prepared(effect, stream);
      if (!prepared) return { outcome: this.core.answer(effect, true), disposition: 'held-unknown' };
      const now = this.core.now();
      const policy = reconcilePolicy(prepared.tool);
      const step: ReconcileStep = mode === 'scheduled' ? decideReconcile(effect, now, policy)
        : mode === 'inline' ? decideInlineReconcile(effect, now, policy, progress.lookedUp) : decideSettleStep(effect, now, policy, progress);
      switch (step.kind) {
        case 'none':
        case 'wait':
          return { outcome: this.core.answer(effect, true), disposition: effectStatus(effect, now) === 'dispatching' ? 'in-flight' : 'held-unknown' };
        case 'lookup': {
          progress.lookedUp = true;
          const checked = await this.traced(prepared, mode, SpanKind.CLIENT, () => this.lookup(prepared, effect, workflow, policy), (c) => [c.method, c.verdict]);
          const next = await this.record(stream, effectId, checked);
          if (checked.verdict === 'committed' || mode !== 'inline') return { outcome: this.core.answer(next, false), disposition: 'reconciled' };
          continue;
        }
        case 'retry-same-key': {
          const started = await this.core.claimResend(prepared, effect.attempts.length);
          if (!started) continue;
          progress.resent = true;
          return this.core.dispatchAndRecord(prepared, started);
        }
        case 'not-committed': {
          const proof: ReconciliationChecked = { type: 'ReconciliationChecked', v: 1, at: now, effectId, method: METHOD[policy.lookup as keyof typeof METHOD], asked: 'the settle window has passed', seen: step.why, verdict: 'not_committed' };
          await this.traced(prepared, mode, SpanKind.INTERNAL, async () => proof, () => ['settle-window', 'not_committed']);
          return { outcome: this.core.answer(await this.record(stream, effectId, proof), false), disposition: 'reconciled' };
        }
        case 'audit': {
          const audited = await this.traced(prepared, mode, SpanKind.CLIENT, () => this.audit(prepared, effect), (a) => ['audit', a.type === 'DuplicateDetected' ? 'duplicate' : a.verdict]);
          const next = await this.record(stream, effectId, audited);
          return { outcome: this.core.answer(next, true), disposition: 'reconciled' };
        }
        case 'escalate': {
          const evidence = effect.checks.map((c) => `${new Date(askedAt(c)).toISOString()} ${c.method}: ${c.seen}${c.verdict === 'unanswered' ? ' (no answer)' : ''}`).join('; ') || 'no lookup possible';
          const next = await this.record(stream, effectId, { type: 'EffectEscalated', v: 1, at: now, effectId, reason: step.reason, evidence });
          return { outcome: this.core.answer(next, false), disposition: 'reconciled' };
        }
      }
    }
    const effect = (await this.core.read(stream)).effects.get(effectId)!;
    return { outcome: this.core.answer(effect, true), disposition: 'held-unknown' };
  }

  /** One check as an `effectd.reconcile.check` span: its kind and verdict (a lookup's HTTP call is this span's, and carries its traceparent). */
  private traced<E>(prepared: PreparedEffect, mode: string, kind: SpanKind, check: () => Promise<E>, describe: (event: E) => [kind: string, verdict: string]): Promise<E> {
    return inSpan(SPAN.reconcileCheck, kind, async (span) => {
      const event = await check();
      span?.setAttributes(checkAttributes(prepared.effectId, prepared.tool.name, mode, ...describe(event)));
      return event;
    });
  }

  private async lookup(prepared: PreparedEffect, effect: EffectState, workflow: WorkflowState, policy: ReconcilePolicy): Promise<ReconciliationChecked> {
    const attempt = currentAttempt(effect)!.started;
    // What a look proves is judged by when it was asked: an answer that took long still describes the provider as it was then.
    const askedAt = this.core.now();
    const result: LookupResult = await this.core.looker(prepared.tool, this.core.dispatchInput(prepared, attempt.providerKey));
    const base = { type: 'ReconciliationChecked' as const, v: 1 as const, at: this.core.now(), askedAt, effectId: effect.effectId, method: METHOD[policy.lookup as keyof typeof METHOD] };
    if (result.kind === 'unsupported') return { ...base, asked: 'nothing (no lookup)', seen: 'unsupported', verdict: 'unanswered' };
    if (result.kind === 'error') return { ...base, asked: result.asked, seen: result.seen, verdict: 'unanswered' };
    if (result.kind !== 'found') return { ...base, asked: result.asked, seen: result.seen, verdict: 'pending' };
    // A key or a stamped reference names this effect alone. A name is not unique: only a match no
    // other effect of this workflow already owns can be this one's.
    const owned = policy.lookup === 'name' ? new Set([...workflow.effects.values()].filter((e) => e.effectId !== effect.effectId && e.receipt).map((e) => e.receipt!)) : new Set<string>();
    const receipt = result.receipts.find((r) => !owned.has(r));
    if (!receipt) return { ...base, asked: result.asked, seen: `${result.seen}, all owned by other effects`, verdict: 'pending' };
    return { ...base, asked: result.asked, seen: result.seen, verdict: 'committed', receipt };
  }

  /**
   * After a settle through a same-key resend: every object at the provider carrying this effect's
   * reference (or key). A provider that forgot the key sooner than its contract says acted twice;
   * that cannot be prevented, but it is noticed, recorded with every receipt, and put before a human.
   */
  private async audit(prepared: PreparedEffect, effect: EffectState): Promise<DuplicateDetected | ResendAudited> {
    const base = { v: 1 as const, at: this.core.now(), effectId: effect.effectId };
    const result = await this.core.looker(prepared.tool, this.core.dispatchInput(prepared, currentAttempt(effect)!.started.providerKey));
    if (result.kind === 'unsupported') return { ...base, type: 'ResendAudited', verdict: 'unverifiable', asked: 'nothing (the tool has no lookup)', seen: 'unsupported' };
    if (result.kind !== 'found') return { ...base, type: 'ResendAudited', verdict: result.kind === 'error' ? 'unverifiable' : 'single', asked: result.asked, seen: result.seen };
    const receipts = [...new Set([effect.receipt!, ...result.receipts])].filter(Boolean);
    if (receipts.length < 2) return { ...base, type: 'ResendAudited', verdict: 'single', asked: result.asked, seen: result.seen };
    return { ...base, type: 'DuplicateDetected', receipts, asked: result.asked, seen: result.seen };
  }

  /**
   * Records what reconciliation found, on the state as it is when it lands: if the effect moved on
   * meanwhile (settled by a resend or a human), the finding is moot and the ledger's word stands.
   */
  private record(stream: string, effectId: string, event: ReconciliationChecked | EffectEscalated | DuplicateDetected | ResendAudited): Promise<EffectState> {
    return this.core.update(stream, (workflow): Decision<EffectState> => {
      if (!accepts(workflow, [event])) return { answer: workflow.effects.get(effectId)! };
      return {
        append: [event],
        answer: (after) => {
          const next = after.effects.get(effectId)!;
          if (event.type === 'ReconciliationChecked') this.core.metrics.reconciliationCheck(next.declared.tool, event.verdict);
          else if (event.type === 'EffectEscalated') this.core.metrics.escalated(next.declared.tool);
          // The log says DUPLICATE from the appended event (src/logging/event-log.ts).
          else if (event.type === 'DuplicateDetected') this.core.metrics.duplicateDetected(next.declared.tool);
          if (next.settledAt === event.at && next.unknownSince !== undefined) this.core.metrics.leftUnknown(next.declared.tool, next.settledAt - next.unknownSince);
          return next;
        },
      };
    });
  }
}
