import type { AgentOutcome } from '../core/agent-outcome.js';
import { canonicalJson } from '../core/canonical-json.js';
import { effectStatus, type EffectState } from '../core/effect-state.js';
import { EffectdError, isEffectdError } from '../core/errors.js';
import type { AbsenceAudited, AttemptStarted, DuplicateDetected, LateArrivalDetected, DuplicateHandled, EffectEscalated, EffectHeld, EffectReleased, EffectResolved, EffectWithdrawn, LedgerEvent, ReconciliationChecked, ResendAudited } from '../core/events.js';
import type { WorkflowState } from '../core/fold.js';
import { nextStep, type Lookaside, type Mode, type OperatorAction, type Progress, type Step, type Submission } from '../core/next-step.js';
import { askedAt } from '../core/reconcile-schedule.js';
import { workflowStream } from '../core/streams.js';
import { targetKeyOf } from '../core/fold.js';
import { ATTR, checkAttributes, effectAttributes, inSpan, SPAN, SpanKind } from '../tracing/index.js';
import { auditAbsence, auditResend, lookUp, methodOf } from './provider-checks.js';
import { accepts, type PreparedEffect, type ShellCore } from './shell-core.js';
import type { DuplicateHandling, PreparedCommand, Resolution, ShellAnswer, TenantContentIndex } from './shell-port.js';
import type { Decision } from './workflow-store.js';

/** Rounds of one run: a lookup, a read for the decider, a release or a lost resend claim each add one; more means a defect. */
const MAX_ROUNDS = 8;
/** A live claim elsewhere is looked at this often: its dispatch may end long before its lease does. */
const CLAIM_POLL_MS = 50;
/** The budget's last look starts this long before it ends (at most a quarter of it), so its answer can still count. */
const LAST_LOOK_LEAD_MS = 150;

/** Where one submission round leaves the run. */
type Round =
  | { kind: 'answer'; answer: ShellAnswer }
  | { kind: 'dispatch'; started: AttemptStarted }
  | { kind: 'take'; step: Extract<Step, { kind: 'lookup' | 'resend' | 'read' }>; effect: EffectState; workflow: WorkflowState }
  | { kind: 'again' };

/** How a check is named on its span (`effectd.check.mode`). */
type CheckMode = 'inline' | 'settle' | 'scheduled';

/**
 * The one runner: it carries out the decider's steps (src/core/next-step.ts) for every mode — a
 * submission, an inline settle within an answer's budget, the background reconciler's schedule, an
 * operator's action. Each step it takes is appended through the workflow store (which re-decides
 * on a lost race) or is a provider call recorded as an event before anyone is told.
 */
export class EffectRunner {
  /** Effects an answer is settling inline in this instance: the background worker leaves them to it meanwhile. */
  readonly settling = new Set<string>();

  constructor(
    private readonly core: ShellCore,
    private readonly tenantContentIndex: TenantContentIndex | undefined,
    /** A step that failed where no caller waits for it (an inline settle's background work). */
    private readonly onError: (what: string, error: unknown) => void,
  ) {}

  /**
   * A submission taken as far as it goes now: fold → replay / refuse / hold / claim, or reconcile
   * first (a lookup, then a same-key resend) → dispatch once with the provider key → record before
   * replying. Each round is one decision on the workflow's state.
   */
  async submit(effect: PreparedCommand): Promise<ShellAnswer> {
    const progress: Progress = { lookedUp: false, resent: false };
    // What the decider asked to be read (read steps), kept for the rounds after.
    const lookaside: { tenantMatch?: Lookaside['tenantMatch']; holders: Map<string, EffectState | undefined> } = { holders: new Map() };
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const next = await inSpan(SPAN.declare, SpanKind.INTERNAL, async (span) => {
        span?.setAttributes(effectAttributes(effect.effectId, effect.tool.name));
        const decided = await this.core.update(effect.stream, (workflow) => this.decideSubmission(effect, workflow, progress, lookaside)).catch((error: unknown) => {
          // Counted here, once, not in the decision (which the store may take more than once).
          if (isEffectdError(error, 'intent_conflict')) this.core.metrics.rejected((error as EffectdError).details['journal'] ? 'decision_conflict' : 'intent_conflict');
          throw error;
        });
        span?.setAttribute(ATTR.decision, decided.kind === 'take' ? decided.step.kind : decided.kind);
        return decided;
      });
      switch (next.kind) {
        case 'answer':
          if (next.answer.disposition === 'replayed') this.core.metrics.replayed(effect.tool.name);
          return next.answer;
        case 'dispatch':
          return this.core.dispatchAndRecord(effect, next.started);
        case 'again':
          continue;
        case 'take': {
          const { step } = next;
          if (step.kind === 'read') {
            if (step.what === 'tenant-content') lookaside.tenantMatch = (await this.tenantContentIndex?.find(effect.declaration.tenant, effect.declaration.contentKey!, effect.effectId, this.core.now())) ?? null;
            else lookaside.holders.set(step.effectId, (await this.core.read(workflowStream(effect.declaration.tenant, step.workflowId))).effects.get(step.effectId));
            continue;
          }
          if (step.kind === 'lookup') {
            progress.lookedUp = true;
            const settled = await this.lookup(effect, next.effect, next.workflow, 'inline');
            if (settled.recordedStatus === 'committed') return { outcome: this.core.answer(settled, false), disposition: 'reconciled' };
            continue;
          }
          const answer = await this.resend(effect, next.effect);
          if (!answer) continue;
          progress.resent = true;
          return answer;
        }
      }
    }
    throw new EffectdError('internal', `effect ${effect.effectId}: no answer after ${MAX_ROUNDS} rounds of decisions; this is a defect`, { effectId: effect.effectId });
  }

  private decideSubmission(effect: PreparedCommand, workflow: WorkflowState, progress: Progress, lookaside: Lookaside): Decision<Round> {
    const { core } = this;
    const current = workflow.effects.get(effect.effectId);
    const submission: Submission = {
      effectId: effect.effectId, intentDigest: effect.declaration.intentDigest, tool: effect.tool.name, target: effect.declaration.target, args: effect.declaration.args,
      step: effect.command.step, repeat: effect.declaration.repeat !== undefined,
      contentKey: effect.declaration.contentKey, targetKey: targetKeyOf(effect.tool.name, effect.declaration.target), ...journalOf(effect, workflow),
    };
    const mode: Mode = { kind: 'submit', submission, workflow, progress: { ...progress }, tenantWindow: this.tenantContentIndex !== undefined };
    const step = nextStep({ effect: current, policy: effect.tool.policy, now: core.now(), mode, lookaside });
    const answered = (answer: ShellAnswer, final?: boolean): Decision<Round> => ({ answer: { kind: 'answer', answer }, ...(final ? { final } : {}) });
    switch (step.kind) {
      case 'refuse':
        throw refusalOf(effect, step, step.recorded && core.answer(step.recorded, true));
      case 'answer': {
        const disposition = step.as === 'unsettled' ? (current && effectStatus(current, core.now()) === 'dispatching' ? 'in-flight' : 'held-unknown') : step.as;
        return answered({ outcome: core.answer(current!, true, step.holder), disposition }, step.final);
      }
      case 'claim': {
        const events = core.claimEvents(effect, current);
        return { append: events, answer: () => ({ kind: 'dispatch', started: events[events.length - 1] as AttemptStarted }) };
      }
      case 'hold': {
        const now = core.now();
        const held: EffectHeld = {
          type: 'EffectHeld', v: 1, at: now, effectId: effect.effectId, matchedEffectId: step.holder.effectId, matchedStep: step.holder.declared.step, scope: step.scope,
          ...(step.scope === 'tenant' ? { matchedWorkflowId: step.holder.declared.workflowId } : {}), ...(step.basis === 'target' ? { basis: 'target' as const } : {}),
        };
        return {
          append: [Object.assign({}, effect.declaration, { at: now }), held],
          answer: (after) => {
            core.metrics.held(effect.tool.name);
            return { kind: 'answer', answer: { outcome: core.answer(after.effects.get(effect.effectId)!, false, step.holder), disposition: 'held' } };
          },
        };
      }
      case 'release':
        // A declared repeat is the agent's act, recorded as the credential that sent it.
        return { append: [{ type: 'EffectReleased', v: 1, at: core.now(), effectId: effect.effectId, releasedBy: step.by === 'agent' ? effect.declaration.principal : 'effectd', reason: step.why }], answer: () => ({ kind: 'again' }) };
      case 'lookup':
      case 'resend':
      case 'read':
        return { answer: { kind: 'take', step, effect: current!, workflow } };
      default:
        throw new EffectdError('internal', `effect ${effect.effectId}: the decider answered a submission with "${step.kind}"; this is a defect`, { effectId: effect.effectId });
    }
  }

  /** The background reconciler's step for one effect, when one is due now. */
  due(effect: EffectState, now: number): boolean {
    const tool = this.core.deps.tools.get(effect.declared.tool);
    if (!tool || this.settling.has(effect.effectId)) return false;
    const step = nextStep({ effect, policy: tool.policy, now, mode: { kind: 'reconcile' } });
    return step.kind !== 'none' && !(step.kind === 'wait' && step.until > now);
  }

  /** Takes the scheduled reconciler's next step for one effect; answers with where it stands afterwards. */
  reconcile(stream: string, effectId: string): Promise<ShellAnswer | undefined> {
    return this.act(stream, effectId, { kind: 'reconcile' }, 'scheduled');
  }

  /**
   * One step of reconciliation in `mode` (the background schedule, or an inline settle, whose
   * progress is kept across steps): decided on the state as it is now, taken, recorded.
   */
  private async act(stream: string, effectId: string, mode: Extract<Mode, { kind: 'reconcile' | 'settle' }>, checkMode: CheckMode): Promise<ShellAnswer | undefined> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const workflow = await this.core.read(stream);
      const effect = workflow.effects.get(effectId);
      if (!effect) return undefined;
      const prepared = this.core.prepared(effect, stream);
      if (!prepared) return { outcome: this.core.answer(effect, true), disposition: 'held-unknown' };
      const now = this.core.now();
      const step = nextStep({ effect, policy: prepared.tool.policy, now, mode });
      switch (step.kind) {
        case 'lookup': {
          if (mode.kind === 'settle') mode.progress.lookedUp = true;
          return { outcome: this.core.answer(await this.lookup(prepared, effect, workflow, checkMode), false), disposition: 'reconciled' };
        }
        case 'resend': {
          const answer = await this.resend(prepared, effect);
          if (!answer) continue;
          if (mode.kind === 'settle') mode.progress.resent = true;
          return answer;
        }
        case 'prove-not-committed': {
          const proof: ReconciliationChecked = { type: 'ReconciliationChecked', v: 1, at: now, effectId, method: methodOf(prepared.tool.policy), asked: 'the settle window has passed', seen: step.why, verdict: 'not_committed' };
          await this.traced(prepared, checkMode, SpanKind.INTERNAL, async () => proof, () => ['settle-window', 'not_committed']);
          return { outcome: this.core.answer(await this.record(stream, effectId, proof), false), disposition: 'reconciled' };
        }
        case 'audit': {
          const audited = step.of === 'resend'
            ? await this.traced(prepared, checkMode, SpanKind.CLIENT, () => auditResend(this.core, prepared, effect), (a) => ['audit', a.type === 'DuplicateDetected' ? 'duplicate' : a.verdict])
            : await this.traced(prepared, checkMode, SpanKind.CLIENT, () => auditAbsence(this.core, prepared, effect, workflow), (a) => ['absence-audit', a.type === 'LateArrivalDetected' ? 'late-arrival' : a.verdict]);
          return { outcome: this.core.answer(await this.record(stream, effectId, audited), true), disposition: 'reconciled' };
        }
        case 'escalate': {
          const evidence = effect.checks.map((c) => `${new Date(askedAt(c)).toISOString()} ${c.method}: ${c.seen}${c.verdict === 'unanswered' ? ' (no answer)' : ''}`).join('; ') || 'no lookup possible';
          const escalated: EffectEscalated = { type: 'EffectEscalated', v: 1, at: now, effectId, reason: step.reason, evidence };
          return { outcome: this.core.answer(await this.record(stream, effectId, escalated), false), disposition: 'reconciled' };
        }
        default:
          return { outcome: this.core.answer(effect, true), disposition: effectStatus(effect, now) === 'dispatching' ? 'in-flight' : 'held-unknown' };
      }
    }
    const effect = (await this.core.read(stream)).effects.get(effectId)!;
    return { outcome: this.core.answer(effect, true), disposition: 'held-unknown' };
  }

  private async lookup(prepared: PreparedEffect, effect: EffectState, workflow: WorkflowState, checkMode: CheckMode): Promise<EffectState> {
    const checked = await this.traced(prepared, checkMode, SpanKind.CLIENT, () => lookUp(this.core, prepared, effect, workflow), (c) => [c.method, c.verdict]);
    return this.record(prepared.stream, effect.effectId, checked);
  }

  /** A same-key resend, claimed only if nobody moved the effect meanwhile; undefined: decide again. */
  private async resend(prepared: PreparedEffect, effect: EffectState): Promise<ShellAnswer | undefined> {
    const started = await this.core.claimResend(prepared, effect.attempts.length);
    return started ? this.core.dispatchAndRecord(prepared, started) : undefined;
  }

  /** One check as an `effectd.reconcile.check` span: its kind and verdict (a lookup's HTTP call is this span's, and carries its traceparent). */
  private traced<E>(prepared: PreparedEffect, mode: CheckMode, kind: SpanKind, check: () => Promise<E>, describe: (event: E) => [kind: string, verdict: string]): Promise<E> {
    return inSpan(SPAN.reconcileCheck, kind, async (span) => {
      const event = await check();
      span?.setAttributes(checkAttributes(prepared.effectId, prepared.tool.name, mode, ...describe(event)));
      return event;
    });
  }

  /**
   * Records what reconciliation found, on the state as it is when it lands: if the effect moved on
   * meanwhile (settled by a resend or a human), the finding is moot and the ledger's word stands.
   */
  private record(stream: string, effectId: string, event: ReconciliationChecked | EffectEscalated | DuplicateDetected | ResendAudited | AbsenceAudited | LateArrivalDetected): Promise<EffectState> {
    const { core } = this;
    return core.update(stream, (workflow): Decision<EffectState> => {
      if (!accepts(workflow, [event])) return { answer: workflow.effects.get(effectId)! };
      const before = workflow.effects.get(effectId)!.recordedStatus;
      return {
        append: [event],
        answer: (after) => {
          const next = after.effects.get(effectId)!;
          // An escalation that evidence settled: the human's queue no longer holds it.
          if (before === 'escalated' && next.recordedStatus !== 'escalated') core.metrics.escalationSettled(next.declared.tool, 'lookup');
          if (event.type === 'ReconciliationChecked') core.metrics.reconciliationCheck(next.declared.tool, event.verdict);
          else if (event.type === 'EffectEscalated') core.metrics.escalated(next.declared.tool);
          // The log says DUPLICATE from the appended event (src/logging/event-log.ts).
          else if (event.type === 'DuplicateDetected') core.metrics.duplicateDetected(next.declared.tool);
          else if (event.type === 'LateArrivalDetected') core.metrics.lateArrival(next.declared.tool);
          if (next.settledAt === event.at && next.unknownSince !== undefined) core.metrics.leftUnknown(next.declared.tool, next.settledAt - next.unknownSince);
          return next;
        },
      };
    });
  }

  // ---- inline settle: the answer waits, within its budget, while reconciliation settles a lost reply

  /** Whether an answer about this effect has anything to wait for (a lost reply, a live claim, lookups due). */
  worthWaiting(effect: EffectState, ownDispatch: boolean): boolean {
    const tool = this.core.deps.tools.get(effect.declared.tool);
    return tool !== undefined && nextStep({ effect, policy: tool.policy, now: this.core.now(), mode: { kind: 'settle', progress: startOf(ownDispatch) } }).kind !== 'none';
  }

  /**
   * After a lost reply the answer waits up to `budgetMs` while the decider's settle steps are taken
   * (a lookup, one same-key resend while the key protects, re-checks on the reconciler's schedule).
   * `ownDispatch`: this answer's own dispatch lost its reply, so the settle starts with a lookup and
   * one same-key resend; otherwise (a resubmission that reconciled first already, a live claim
   * elsewhere) it only follows the schedule, so one submission never resends twice. A step still
   * running when the budget ends goes on and is recorded; only the answer stops waiting for it.
   */
  async settle(stream: string, effectId: string, budgetMs: number, ownDispatch: boolean): Promise<{ effect: EffectState; waitedMs: number }> {
    const started = performance.now();
    const deadline = started + budgetMs;
    const stop = { stopped: false };
    // Another answer of this instance is settling it already: wait on that one, as on a claim.
    const owner = !this.settling.has(effectId);
    if (owner) this.settling.add(effectId);
    const lastLookAt = this.core.now() + budgetMs - Math.min(LAST_LOOK_LEAD_MS, budgetMs / 4);
    const work = (owner ? this.settleLoop(stream, effectId, deadline, { ...startOf(ownDispatch), lastLookAt }, stop) : this.watch(stream, effectId, deadline, stop))
      // A step that fails (or is still in flight when the budget ends) is the background reconciler's to take again.
      .catch((error: unknown) => this.onError(`inline settle: ${effectId}`, error))
      .finally(() => {
        if (owner) this.settling.delete(effectId);
      });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, budgetMs)))]);
    clearTimeout(timer);
    stop.stopped = true;
    const effect = (await this.core.read(stream)).effects.get(effectId)!;
    return { effect, waitedMs: Math.round(performance.now() - started) };
  }

  private async settleLoop(stream: string, effectId: string, deadline: number, progress: Progress, stop: { stopped: boolean }): Promise<void> {
    while (!stop.stopped) {
      const wait = await this.nextWait(stream, effectId, deadline, progress);
      if (wait === 'done') return;
      if (wait === 'act') await this.act(stream, effectId, { kind: 'settle', progress }, 'settle');
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

  /** What the settle loop does next: act, sleep this many ms, or stop. */
  private async nextWait(stream: string, effectId: string, deadline: number, progress: Progress): Promise<'done' | 'act' | number> {
    const effect = (await this.core.read(stream)).effects.get(effectId);
    const tool = effect && this.core.deps.tools.get(effect.declared.tool);
    if (!effect || !tool) return 'done';
    const now = this.core.now();
    const step = nextStep({ effect, policy: tool.policy, now, mode: { kind: 'settle', progress } });
    if (step.kind === 'none') return 'done';
    if (step.kind !== 'wait') return 'act';
    const left = deadline - performance.now();
    // A live claim is waited on, never taken over; a re-check due after the budget is the background reconciler's.
    if (effectStatus(effect, now) === 'dispatching') return left <= 0 ? 'done' : Math.max(1, Math.min(CLAIM_POLL_MS, left));
    return step.until - now >= left ? 'done' : Math.max(1, step.until - now);
  }

  // ---- what only operators do; each action is an event naming who did it

  /** Settles an escalated, terminal or unknown effect with what the operator found: who, what, and the evidence. */
  resolve(effect: EffectState, resolution: Resolution): Promise<EffectState> {
    const { core } = this;
    return core.update(workflowStream(effect.declared.tenant, effect.declared.workflowId), (workflow) => {
      const current = workflow.effects.get(effect.effectId)!;
      const step = this.operatorStep(current, 'resolve');
      const event: EffectResolved = { type: 'EffectResolved', v: 1, at: core.now(), effectId: effect.effectId, ...resolution };
      if (step.kind !== 'resolve' || !accepts(workflow, [event])) throw refusal(step, `effect ${effect.effectId} cannot be resolved now`);
      return {
        append: [event],
        answer: (after) => {
          const next = after.effects.get(effect.effectId)!;
          core.metrics.resolved(resolution.outcome);
          if (current.recordedStatus === 'escalated') core.metrics.escalationSettled(next.declared.tool, 'human');
          if (next.unknownSince !== undefined) core.metrics.leftUnknown(next.declared.tool, event.at - next.unknownSince);
          return next;
        },
      };
    });
  }

  /** Lets a held effect go (a repeat the agent should have declared): released and claimed in one append, then dispatched. */
  async release(effect: EffectState, releasedBy: string, reason: string): Promise<ShellAnswer> {
    const { core } = this;
    const stream = workflowStream(effect.declared.tenant, effect.declared.workflowId);
    const { prepared, started } = await core.update(stream, (workflow) => {
      const current = workflow.effects.get(effect.effectId)!;
      const step = this.operatorStep(current, 'release');
      if (step.kind !== 'release') throw refusal(step, `effect ${effect.effectId} cannot be released now`);
      const prepared = core.prepared(current, stream);
      if (!prepared) throw new EffectdError('unknown_tool', `tool ${effect.declared.tool} is no longer configured`);
      const released: EffectReleased = { type: 'EffectReleased', v: 1, at: core.now(), effectId: effect.effectId, releasedBy, reason };
      const claim = core.claimEvents(prepared, { ...current, recordedStatus: 'declared' });
      return { append: [released, ...claim] as LedgerEvent[], answer: () => ({ prepared, started: claim[claim.length - 1] as AttemptStarted }) };
    });
    return core.dispatchAndRecord(prepared, started);
  }

  /**
   * Withdraws an effect nothing was sent for (declared, held): it settles as not done and is never
   * sent. Refused (illegal_transition, saying so) once anything was claimed: the world cannot be
   * cancelled. Decided on the stream as it stands, so a claim that won the race refuses it.
   */
  withdraw(effect: EffectState, withdrawnBy: string, reason: string): Promise<EffectState> {
    const { core } = this;
    return core.update(workflowStream(effect.declared.tenant, effect.declared.workflowId), (workflow) => {
      const current = workflow.effects.get(effect.effectId)!;
      const step = this.operatorStep(current, 'withdraw');
      const event: EffectWithdrawn = { type: 'EffectWithdrawn', v: 1, at: core.now(), effectId: effect.effectId, withdrawnBy, reason };
      if (step.kind !== 'withdraw' || !accepts(workflow, [event])) throw refusal(step, `effect ${effect.effectId} cannot be withdrawn now`);
      return { append: [event], answer: (after) => after.effects.get(effect.effectId)! };
    });
  }

  /** Records how an operator dealt with one extra object of a detected duplicate. */
  handleDuplicate(effect: EffectState, handling: DuplicateHandling): Promise<EffectState> {
    const { core } = this;
    return core.update(workflowStream(effect.declared.tenant, effect.declared.workflowId), (workflow) => {
      const event: DuplicateHandled = { type: 'DuplicateHandled', v: 1, at: core.now(), effectId: effect.effectId, ...handling };
      if (!accepts(workflow, [event])) {
        throw new EffectdError('illegal_transition', `receipt ${handling.receipt} is not an unhandled extra object of effect ${effect.effectId}'s detected duplicate`, { effectId: effect.effectId, receipt: handling.receipt });
      }
      return { append: [event], answer: (after) => after.effects.get(effect.effectId)! };
    });
  }

  private operatorStep(effect: EffectState, action: OperatorAction): Step {
    const tool = this.core.deps.tools.get(effect.declared.tool);
    return nextStep({ effect, policy: tool?.policy ?? NO_POLICY, now: this.core.now(), mode: { kind: 'operator', action } });
  }
}

/**
 * A refused command, worded by where the recorded effect stands: it never invites a new step while
 * that effect may have happened or did (only a proven not_done does), and it carries that effect's
 * answer, so every door can say what was recorded (docs/http-api.md, "Refusals").
 */
function refusalOf(effect: PreparedCommand, step: Extract<Step, { kind: 'refuse' }>, recorded: AgentOutcome | undefined): EffectdError {
  const { workflowId, step: stepName, slot } = effect.command;
  if (step.details['journal'] === true) return new EffectdError(step.code, `step ${stepName} of workflow ${workflowId} ${step.message}`, step.details);
  const where = `effect ${effect.effectId} (workflow ${workflowId}, step ${stepName}, slot ${slot})`;
  if (!recorded) return new EffectdError(step.code, `${where} ${step.message}`, step.details);
  const next = recorded.status === 'not_done' ? ' A changed intent needs a new step.' : recorded.status === 'done' ? ' It is done: do not do it again under another step.' : ` Do not start another ${recorded.tool} for ${recorded.target} while it is checked.`;
  return new EffectdError(step.code, `${where} ${step.message}; nothing was sent for this command. What step ${stepName} recorded: ${recorded.message}${next}`, { ...step.details, recorded: { status: recorded.status, state: recorded.state, ...(recorded.receipt ? { receipt: recorded.receipt } : {}), message: recorded.message } });
}

/** A tool no longer configured: nothing to look up or resend with (an operator's action needs no more). */
const NO_POLICY = { lookup: 'none', lookupConsistent: false, dedupesByKey: false, settleWindowMs: 0, resends: { max: 0, withinMs: 0 }, concurrentTargets: false, committedPerTarget: 'many' } as const;

function refusal(step: Step, fallback: string): EffectdError {
  return step.kind === 'refuse' ? new EffectdError(step.code, step.message, step.details) : new EffectdError('illegal_transition', fallback);
}

/** The step's journaled decision, when the model decided it: whether this command is it. */
function journalOf(effect: PreparedCommand, workflow: WorkflowState): Pick<Submission, 'journal'> {
  const decision = workflow.decisions.get(effect.command.step);
  if (!decision) return {};
  const decided = decision.tool === effect.tool.name ? effect.tool.schema.safeParse(decision.args) : undefined;
  const matches = decided?.success === true && canonicalJson(decided.data) === canonicalJson(effect.declaration.args);
  return { journal: matches ? { matches: true } : { matches: false, decision } };
}

function startOf(ownDispatch: boolean): Progress {
  return { lookedUp: !ownDispatch, resent: !ownDispatch };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
