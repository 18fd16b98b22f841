import { effectCommand, type EffectCommand } from '../core/effect-command.js';
import type { EffectAddress } from '../core/identity.js';
import { effectStatus, type EffectState } from '../core/effect-state.js';
import { EffectdError, invalidCommand, isEffectdError } from '../core/errors.js';
import type { AttemptStarted, EffectHeld } from '../core/events.js';
import { contentKeyOf, findContentMatch, findTargetHold, holdsBack, holdsTarget } from '../core/content-index.js';
import { targetKeyOf, type WorkflowState } from '../core/fold.js';
import { deriveEffectId } from '../core/identity.js';
import { intentDigest } from '../core/intent.js';
import { decideDispatch } from '../core/shell-decision.js';
import { workflowStream } from '../core/streams.js';
import { ATTR, currentTraceparent, effectAttributes, inSpan, SPAN, SpanKind } from '../tracing/index.js';
import { DecisionJournal } from './decision-journal.js';
import { InlineSettler } from './inline-settle.js';
import { OperatorActions } from './operator-actions.js';
import { Reconciler, reconcilePolicy } from './reconciler.js';
import { decideReconcile } from '../core/reconcile-decision.js';
import type { AgentOutcome } from '../core/agent-outcome.js';
import type { Tool } from '../providers/tool-registry.js';
import { ShellCore, type PreparedEffect, type ShellAnswer, type ShellDeps } from './shell-core.js';
import type { Decision } from './workflow-store.js';

export type { Dispatcher, Disposition, Looker, ShellAnswer, ShellDeps } from './shell-core.js';

import type { Actor, DecisionInput, DuplicateHandling, PreparedCommand, Resolution, ShellPort } from './shell-port.js';
export type { Actor, PreparedCommand } from './shell-port.js';

/** Where one round of the shell's decisions leaves an effect. */
type Round =
  | { kind: 'answer'; answer: ShellAnswer }
  | { kind: 'dispatch'; started: AttemptStarted }
  | { kind: 'reconcile' }
  | { kind: 'again' };

/** An effect a new one is held against, where it was found, and why. */
interface Match {
  effect: EffectState;
  scope: 'workflow' | 'tenant';
  basis: 'content' | 'target';
}

/** Traces are exported: the declaration keeps its command's traceparent, so later checks join that trace. */
const traceparentOf = (traceparent: string | undefined) => (traceparent !== undefined ? { traceparent } : {});

const answered = (answer: ShellAnswer): Decision<Round> => ({ answer: { kind: 'answer', answer } });

/** Rounds of one submission: reconcile-first or a release adds one; more means a defect. */
const MAX_ROUNDS = 4;

/**
 * The deterministic shell (docs/design.md): fold → replay / conflict / back off / reconcile-first →
 * claim with the expected revision → dispatch once with the provider key → record before replying.
 */
export class EffectShell implements ShellPort {
  readonly core: ShellCore;
  readonly reconciler: Reconciler;
  /** After a lost reply: the answer waits, within its budget, for reconciliation to settle it. */
  readonly settler: InlineSettler;
  /** The model's journaled decisions. */
  readonly journal: DecisionJournal;
  /** What only operators do: resolve what effectd can't, release what it held. */
  readonly operators: OperatorActions;

  constructor(deps: ShellDeps) {
    this.core = new ShellCore(deps);
    this.reconciler = new Reconciler(this.core);
    this.settler = new InlineSettler(this.core, this.reconciler);
    this.journal = new DecisionJournal(this.core);
    this.operators = new OperatorActions(this.core);
  }

  /**
   * Validates a raw command against the wire schema and the tool's contract, for the tenant and
   * actor the gateway authenticated (never the ones a payload names). Throws `invalid_command` / `unknown_tool`.
   */
  prepare(raw: unknown, as: Actor): PreparedCommand {
    const parsed = effectCommand.safeParse(raw);
    if (!parsed.success) throw invalidCommand('the command is malformed', parsed.error.issues);
    const command = parsed.data;
    const { tools, secret } = this.core.deps;
    const tool = tools.get(command.tool);
    if (!tool) {
      const known = tools.list().map((t) => t.name).join(', ');
      throw new EffectdError('unknown_tool', `unknown tool "${command.tool}"; known tools: ${known}`, { tool: command.tool });
    }
    const args = tool.schema.safeParse(command.args);
    if (!args.success) throw invalidCommand(`args do not fit tool ${tool.name}`, args.error.issues, ['args']);
    const address = { tenant: as.tenant, workflowId: command.workflowId, step: command.step, slot: command.slot };
    const effectId = deriveEffectId(secret, address);
    const canonical = args.data;
    const target = tool.target(canonical);
    const contentKey = contentKeyOf(tool.name, target, canonical, tool.spec.businessFields);
    return {
      command,
      address,
      tool,
      effectId,
      stream: workflowStream(as.tenant, command.workflowId),
      declaration: {
        type: 'EffectDeclared', v: 1, effectId, tenant: as.tenant, workflowId: command.workflowId, step: command.step, slot: command.slot,
        tool: tool.name, contractVersion: tool.spec.version, intentDigest: intentDigest({ tool: tool.name, contractVersion: tool.spec.version, args: canonical, target }),
        args: canonical, target, principal: as.actor, contentKey,
        ...(as.onBehalfOf !== undefined && as.onBehalfOf !== as.actor ? { onBehalfOf: as.onBehalfOf } : {}),
        ...(command.repeat ? { repeat: command.repeat } : {}),
        ...traceparentOf(currentTraceparent()),
      },
    };
  }

  async execute(raw: unknown, as: Actor): Promise<ShellAnswer> {
    return this.run(this.prepare(raw, as));
  }

  /**
   * After a lost reply, the answer waits within its budget while reconciliation settles the effect
   * (docs/inline-settle.md): `done` or a proven `not_done` on the first call when the truth comes
   * in time, else `unknown` as before. An answer that is not `unknown` never waits.
   */
  async submit(effect: PreparedCommand, budgetMs: number): Promise<ShellAnswer> {
    const answer = await this.run(effect);
    if (answer.outcome.status !== 'unknown' || answer.disposition === 'held' || budgetMs === 0) return answer;
    const current = (await this.core.read(effect.stream)).effects.get(effect.effectId);
    const ownDispatch = answer.disposition === 'dispatched';
    if (!current || !this.settler.worthWaiting(current, ownDispatch)) return answer;
    try {
      const { outcome, waitedMs } = await this.settler.settle(effect.stream, effect.effectId, budgetMs, ownDispatch);
      return { outcome: { ...outcome, waitedMs }, disposition: outcome.status === 'unknown' ? answer.disposition : 'reconciled' };
    } catch (error) {
      // The lost reply is recorded as unknown and the background reconciler settles it: that answer stands.
      console.error(`effectd inline settle: ${effect.effectId}: ${(error as Error).message}`);
      return answer;
    }
  }

  decide(tenant: string, workflowId: string, input: DecisionInput, recordedBy: string) {
    return this.journal.decide(tenant, workflowId, input, recordedBy);
  }

  resolve(effect: EffectState, resolution: Resolution): Promise<EffectState> {
    return this.operators.resolve(effect, resolution);
  }

  release(effect: EffectState, releasedBy: string, reason: string): Promise<ShellAnswer> {
    return this.operators.release(effect, releasedBy, reason);
  }

  handleDuplicate(effect: EffectState, handling: DuplicateHandling): Promise<EffectState> {
    return this.operators.handleDuplicate(effect, handling);
  }

  read(stream: string): Promise<WorkflowState> {
    return this.core.read(stream);
  }

  tool(name: string): Tool | undefined {
    return this.core.deps.tools.get(name);
  }

  tools(): readonly Tool[] {
    return this.core.deps.tools.list();
  }

  answer(effect: EffectState, replayed: boolean, matched?: EffectState): AgentOutcome {
    return this.core.answer(effect, replayed, matched);
  }

  stillLooking(effect: EffectState, now: number): boolean {
    const tool = this.tool(effect.declared.tool);
    return tool !== undefined && decideReconcile(effect, now, reconcilePolicy(tool)).kind !== 'none';
  }

  now(): number {
    return this.core.now();
  }

  /**
   * Takes the effect as far as it goes now. Each round is one decision on the workflow's state
   * (through the store, which re-decides on a lost race); a round ends in an answer, a claim to
   * dispatch, or reconcile-first, after which the next round decides on what reconciliation found.
   */
  async run(effect: PreparedCommand): Promise<ShellAnswer> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const next = await inSpan(SPAN.declare, SpanKind.INTERNAL, async (span) => {
        span?.setAttributes(effectAttributes(effect.effectId, effect.tool.name));
        const decided = await this.core.update(effect.stream, (workflow) => this.decideRound(effect, workflow)).catch((error: unknown) => {
          // Counted here, once, not in the decision (which the store may take more than once).
          if (isEffectdError(error, 'intent_conflict') && (error as EffectdError).details?.['recordedDigest'] !== undefined) this.core.metrics.rejected('intent_conflict');
          throw error;
        });
        span?.setAttribute(ATTR.decision, decided.kind);
        return decided;
      });
      switch (next.kind) {
        case 'answer':
          if (next.answer.disposition === 'replayed') this.core.metrics.replayed(effect.tool.name);
          return next.answer;
        case 'dispatch':
          return this.core.dispatchAndRecord(effect, next.started);
        case 'reconcile': {
          // Reconcile first: never dispatch an unknown effect blindly.
          const answer = await this.reconciler.step(effect.stream, effect.effectId, 'inline');
          if (answer) return answer;
          continue;
        }
        case 'again':
          continue;
      }
    }
    throw new EffectdError('internal', `effect ${effect.effectId}: no answer after ${MAX_ROUNDS} rounds of decisions; this is a defect`, { effectId: effect.effectId });
  }

  private async decideRound(effect: PreparedCommand, workflow: WorkflowState): Promise<Decision<Round>> {
    const { core } = this;
    this.journal.check(effect, workflow);
    const current = workflow.effects.get(effect.effectId);
    const decision = decideDispatch(current, effect.declaration.intentDigest, core.now(), effect.tool.keyPolicy);
    const claim = (): Decision<Round> => {
      const events = core.claimEvents(effect, current);
      return { append: events, answer: () => ({ kind: 'dispatch', started: events[events.length - 1] as AttemptStarted }) };
    };
    switch (decision.kind) {
      case 'conflict':
        throw new EffectdError('intent_conflict', `effect ${effect.effectId} (workflow ${effect.command.workflowId}, step ${effect.command.step}, slot ${effect.command.slot}) was declared with other arguments; a changed intent needs a new step`, { effectId: effect.effectId, recordedDigest: decision.recordedDigest, submittedDigest: effect.declaration.intentDigest });
      case 'replay': {
        // Committed or proven not committed never changes: final, so a warm cache answers it unread.
        const status = current!.recordedStatus;
        return { answer: { kind: 'answer', answer: { outcome: core.answer(current!, true), disposition: 'replayed' } }, final: status === 'committed' || status === 'failed_before_effect' };
      }
      case 'in-flight':
        return answered({ outcome: core.answer(current!, true), disposition: 'in-flight' });
      case 'retry-same-key':
      case 'hold-unknown':
        return { answer: { kind: 'reconcile' } };
      case 'declare': {
        // The content index: a new step that repeats a done or open effect is held, never sent,
        // unless the repeat is declared.
        const match = effect.declaration.repeat ? undefined : (await this.contentMatch(effect, workflow)) ?? this.targetMatch(effect, workflow);
        if (!match) return claim();
        const now = core.now();
        const held: EffectHeld = {
          type: 'EffectHeld', v: 1, at: now, effectId: effect.effectId, matchedEffectId: match.effect.effectId, matchedStep: match.effect.declared.step, scope: match.scope,
          ...(match.scope === 'tenant' ? { matchedWorkflowId: match.effect.declared.workflowId } : {}), ...(match.basis === 'target' ? { basis: 'target' as const } : {}),
        };
        return {
          append: [Object.assign({}, effect.declaration, { at: now }), held],
          answer: (next) => {
            core.metrics.held(effect.tool.name);
            return { kind: 'answer', answer: { outcome: core.answer(next.effects.get(effect.effectId)!, false, match.effect), disposition: 'held' } };
          },
        };
      }
      case 'held': {
        const by = current!.heldBy!;
        const matched = await this.matchedEffect(current!, workflow);
        const holds = matched && (by.basis === 'target' ? holdsTarget(matched, core.now()) : holdsBack(matched, core.now()));
        if (holds) return answered({ outcome: core.answer(current!, true, matched), disposition: 'held' });
        // A content hold whose match proved not to have happened, or a target hold whose match has
        // settled: this step may go, under the usual rules.
        const reason = by.basis === 'target' ? `step ${by.step} on the same target has settled${matched ? ` (${effectStatus(matched, core.now())})` : ''}` : `step ${by.step} did not happen`;
        return { append: [{ type: 'EffectReleased', v: 1, at: core.now(), effectId: effect.effectId, releasedBy: 'effectd', reason }], answer: () => ({ kind: 'again' }) };
      }
      case 'claim':
        return claim();
    }
  }

  /** An open, ambiguous effect of this workflow on the same tool + target, unless the tool takes concurrent effects on a target. */
  private targetMatch(effect: PreparedCommand, workflow: WorkflowState): Match | undefined {
    if (effect.tool.spec.concurrentTargets) return undefined;
    const ids = workflow.byTarget.get(targetKeyOf(effect.tool.name, effect.declaration.target)) ?? [];
    // Slots of one step are declared together on purpose (one-to-many): they never hold each other.
    const others = ids.map((id) => workflow.effects.get(id)!).filter((e) => e.declared.step !== effect.command.step);
    const open = findTargetHold(others, effect.effectId, this.core.now());
    return open ? { effect: open, scope: 'workflow', basis: 'target' } : undefined;
  }

  private async contentMatch(effect: PreparedCommand, workflow: WorkflowState): Promise<Match | undefined> {
    const now = this.core.now();
    const key = effect.declaration.contentKey!;
    const local = findContentMatch((workflow.byContent.get(key) ?? []).map((id) => workflow.effects.get(id)!), key, effect.effectId, now);
    if (local) return { effect: local, scope: 'workflow', basis: 'content' };
    const other = await this.core.deps.tenantContentIndex?.find(effect.declaration.tenant, key, effect.effectId, now);
    return other ? { effect: other.effect, scope: 'tenant', basis: 'content' } : undefined;
  }

  /** The effect a held one was held against, as it stands now. */
  private async matchedEffect(held: EffectState, workflow: WorkflowState): Promise<EffectState | undefined> {
    const by = held.heldBy!;
    if (!by.workflowId) return workflow.effects.get(by.effectId);
    return (await this.core.read(workflowStream(held.declared.tenant, by.workflowId))).effects.get(by.effectId);
  }
}
