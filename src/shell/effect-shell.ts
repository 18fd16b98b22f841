import { effectCommand, type EffectCommand } from '../core/effect-command.js';
import { effectStatus, type EffectState } from '../core/effect-state.js';
import { EffectdError, isEffectdError } from '../core/errors.js';
import type { DecisionRecorded, EffectHeld, EffectResolved } from '../core/events.js';
import { canonicalJson } from '../core/canonical-json.js';
import { contentKeyOf, findContentMatch, holdsBack } from '../core/content-index.js';
import type { WorkflowState } from '../core/fold.js';
import { deriveEffectId } from '../core/identity.js';
import { intentDigest } from '../core/intent.js';
import { decideDispatch } from '../core/shell-decision.js';
import { workflowStream } from '../core/streams.js';
import { Reconciler } from './reconciler.js';
import { MAX_RACES, ShellCore, type PreparedEffect, type ShellAnswer, type ShellDeps } from './shell-core.js';

export type { Dispatcher, Disposition, Looker, ShellAnswer, ShellDeps } from './shell-core.js';

/** A command checked against its tool: everything the shell needs, nothing persisted yet. */
export interface PreparedCommand extends PreparedEffect {
  command: EffectCommand;
}

/**
 * The deterministic shell (DESIGN.md): fold → replay / conflict / back off / reconcile-first →
 * claim with the expected revision → dispatch once with the provider key → record before replying.
 */
export class EffectShell {
  readonly core: ShellCore;
  readonly reconciler: Reconciler;

  constructor(deps: ShellDeps) {
    this.core = new ShellCore(deps);
    this.reconciler = new Reconciler(this.core);
  }

  /** Validates a raw command against the wire schema and the tool's contract. Throws `invalid_command` / `unknown_tool`. */
  prepare(raw: unknown): PreparedCommand {
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
    const effectId = deriveEffectId(secret, command);
    const canonical = args.data;
    const target = tool.target(canonical);
    const contentKey = contentKeyOf(tool.name, target, canonical, tool.spec.businessFields);
    return {
      command,
      tool,
      effectId,
      stream: workflowStream(command.tenant, command.workflowId),
      declaration: {
        type: 'EffectDeclared', v: 1, effectId, tenant: command.tenant, workflowId: command.workflowId, step: command.step, slot: command.slot,
        tool: tool.name, contractVersion: tool.spec.version, intentDigest: intentDigest({ tool: tool.name, contractVersion: tool.spec.version, args: canonical, target }),
        args: canonical, target, principal: command.principal, contentKey, ...(command.repeat ? { repeat: command.repeat } : {}),
      },
    };
  }

  async execute(raw: unknown): Promise<ShellAnswer> {
    return this.run(this.prepare(raw));
  }

  async run(effect: PreparedCommand): Promise<ShellAnswer> {
    const { core } = this;
    for (let race = 0; race < MAX_RACES; race++) {
      const workflow = await core.read(effect.stream);
      this.checkDecision(effect, workflow);
      const current = workflow.effects.get(effect.effectId);
      const decision = decideDispatch(current, effect.declaration.intentDigest, core.now(), effect.tool.keyPolicy);
      switch (decision.kind) {
        case 'conflict':
          core.metrics.rejected('intent_conflict');
          throw new EffectdError('intent_conflict', `effect ${effect.effectId} (workflow ${effect.command.workflowId}, step ${effect.command.step}, slot ${effect.command.slot}) was declared with other arguments; a changed intent needs a new step`, { effectId: effect.effectId, recordedDigest: decision.recordedDigest, submittedDigest: effect.declaration.intentDigest });
        case 'replay':
          core.metrics.replayed(effect.tool.name);
          return { outcome: core.answer(current!, true), disposition: 'replayed' };
        case 'in-flight':
          return { outcome: core.answer(current!, true), disposition: 'in-flight' };
        case 'retry-same-key':
        case 'hold-unknown': {
          // Reconcile first: never dispatch an unknown effect blindly.
          const answer = await this.reconciler.step(effect.stream, effect.effectId, 'inline');
          if (answer) return answer;
          continue;
        }
        case 'declare': {
          // The content index: a new step that repeats a done or open effect is held, never sent,
          // unless the repeat is declared.
          const match = effect.declaration.repeat ? undefined : await this.contentMatch(effect, workflow);
          if (match) {
            const now = core.now();
            const held: EffectHeld = { type: 'EffectHeld', v: 1, at: now, effectId: effect.effectId, matchedEffectId: match.effect.effectId, matchedStep: match.effect.declared.step, scope: match.scope, ...(match.scope === 'tenant' ? { matchedWorkflowId: match.effect.declared.workflowId } : {}) };
            try {
              const next = await core.append(effect.stream, workflow, [{ ...effect.declaration, at: now }, held]);
              core.metrics.held(effect.tool.name);
              return { outcome: core.answer(next.effects.get(effect.effectId)!, false, match.effect), disposition: 'held' };
            } catch (error) {
              if (isEffectdError(error, 'concurrency_conflict')) continue;
              throw error;
            }
          }
          const answer = await core.claimAndDispatch(effect, workflow, current);
          if (answer) return answer;
          continue;
        }
        case 'held': {
          const matched = await this.matchedEffect(current!, workflow);
          if (matched && holdsBack(matched, core.now())) return { outcome: core.answer(current!, true, matched), disposition: 'held' };
          // What it was held against proved not to have happened: this step may go.
          try {
            await core.append(effect.stream, workflow, [{ type: 'EffectReleased', v: 1, at: core.now(), effectId: effect.effectId, releasedBy: 'effectd', reason: `step ${current!.heldBy!.step} did not happen` }]);
          } catch (error) {
            if (!isEffectdError(error, 'concurrency_conflict')) throw error;
          }
          continue;
        }
        case 'claim': {
          const answer = await core.claimAndDispatch(effect, workflow, current);
          if (answer) return answer;
          continue; // someone else moved the stream: decide again
        }
      }
    }
    throw new Error(`effect ${effect.effectId}: gave up after ${MAX_RACES} concurrent appends to ${effect.stream}`);
  }

  /** A step the model already decided runs as decided: a resubmission can't rephrase it. */
  private checkDecision(effect: PreparedCommand, workflow: WorkflowState): void {
    const decision = workflow.decisions.get(effect.command.step);
    if (!decision) return;
    const decided = decision.tool === effect.tool.name ? effect.tool.schema.safeParse(decision.args) : undefined;
    const same = decided?.success && canonicalJson(decided.data) === canonicalJson(effect.declaration.args);
    if (!same) {
      this.core.metrics.rejected('decision_conflict');
      throw new EffectdError('intent_conflict', `step ${effect.command.step} of workflow ${effect.command.workflowId} was decided as ${decision.tool} ${JSON.stringify(decision.args)}; submit the recorded decision (GET …/decisions) or decide a new step`, { step: effect.command.step, decision });
    }
  }

  /**
   * Journals the model's decision for a step before anything acts on it. A step is decided once:
   * a second call (a resumed task) gets the recorded decision back, and the model is not asked again.
   */
  async decide(tenant: string, workflowId: string, input: { step: string; tool: string; args: Record<string, unknown>; decidedBy?: string }): Promise<{ decision: DecisionRecorded; replayed: boolean }> {
    const { core } = this;
    const tool = core.deps.tools.get(input.tool);
    if (!tool) throw new EffectdError('unknown_tool', `unknown tool "${input.tool}"; known tools: ${core.deps.tools.list().map((t) => t.name).join(', ')}`, { tool: input.tool });
    const args = tool.schema.safeParse(input.args);
    if (!args.success) throw invalidCommand(`args do not fit tool ${tool.name}`, args.error.issues, ['args']);
    const stream = workflowStream(tenant, workflowId);
    for (let race = 0; race < MAX_RACES; race++) {
      const workflow = await core.read(stream);
      const recorded = workflow.decisions.get(input.step);
      if (recorded) return { decision: recorded, replayed: true };
      const decision: DecisionRecorded = { type: 'DecisionRecorded', v: 1, at: core.now(), step: input.step, tool: input.tool, args: input.args, ...(input.decidedBy ? { decidedBy: input.decidedBy } : {}) };
      try {
        await core.append(stream, workflow, [decision]);
        return { decision, replayed: false };
      } catch (error) {
        if (!isEffectdError(error, 'concurrency_conflict')) throw error;
      }
    }
    throw new Error(`workflow ${workflowId}: could not record the decision for step ${input.step} after ${MAX_RACES} races`);
  }

  private async contentMatch(effect: PreparedCommand, workflow: WorkflowState): Promise<{ effect: EffectState; scope: 'workflow' | 'tenant' } | undefined> {
    const now = this.core.now();
    const key = effect.declaration.contentKey!;
    const local = findContentMatch(workflow.effects.values(), key, effect.effectId, now);
    if (local) return { effect: local, scope: 'workflow' };
    const other = await this.core.deps.tenantContentIndex?.find(effect.declaration.tenant, key, effect.effectId, now);
    return other ? { effect: other.effect, scope: 'tenant' } : undefined;
  }

  /** The effect a held one was held against, as it stands now. */
  private async matchedEffect(held: EffectState, workflow: WorkflowState): Promise<EffectState | undefined> {
    const by = held.heldBy!;
    if (!by.workflowId) return workflow.effects.get(by.effectId);
    return (await this.core.read(workflowStream(held.declared.tenant, by.workflowId))).effects.get(by.effectId);
  }

  /** An operator lets a held effect go (a repeat the agent should have declared): it is dispatched now. */
  async release(effect: EffectState, releasedBy: string, reason: string): Promise<ShellAnswer> {
    const { core } = this;
    const stream = workflowStream(effect.declared.tenant, effect.declared.workflowId);
    for (let race = 0; race < MAX_RACES; race++) {
      const workflow = await core.read(stream);
      const current = workflow.effects.get(effect.effectId)!;
      if (current.recordedStatus !== 'held') throw new EffectdError('illegal_transition', `effect ${effect.effectId} is ${effectStatus(current, core.now())}, not held`);
      try {
        const released = await core.append(stream, workflow, [{ type: 'EffectReleased', v: 1, at: core.now(), effectId: effect.effectId, releasedBy, reason }]);
        const prepared = core.prepared(released.effects.get(effect.effectId)!, stream);
        if (!prepared) throw new EffectdError('unknown_tool', `tool ${effect.declared.tool} is no longer configured`);
        const answer = await core.claimAndDispatch(prepared, released, released.effects.get(effect.effectId));
        if (answer) return answer;
      } catch (error) {
        if (!isEffectdError(error, 'concurrency_conflict')) throw error;
      }
    }
    throw new Error(`effect ${effect.effectId}: could not release after ${MAX_RACES} races`);
  }

  /** Records an operator's resolution of an escalated, terminal or unknown effect: who, what, and the evidence. */
  async resolve(effect: EffectState, resolution: Resolution): Promise<EffectState> {
    const { core } = this;
    const stream = workflowStream(effect.declared.tenant, effect.declared.workflowId);
    for (let race = 0; race < MAX_RACES; race++) {
      const workflow = await core.read(stream);
      const current = workflow.effects.get(effect.effectId)!;
      const event: EffectResolved = { type: 'EffectResolved', v: 1, at: core.now(), effectId: effect.effectId, ...resolution };
      try {
        const next = (await core.append(stream, workflow, [event])).effects.get(effect.effectId)!;
        core.metrics.resolved(resolution.outcome);
        if (next.unknownSince !== undefined) core.metrics.leftUnknown(next.declared.tool, event.at - next.unknownSince);
        return next;
      } catch (error) {
        if (isEffectdError(error, 'concurrency_conflict')) continue;
        if (isEffectdError(error, 'illegal_transition')) {
          throw new EffectdError('illegal_transition', `effect ${effect.effectId} is ${effectStatus(current, core.now())}: only an escalated, terminal or unknown effect can be resolved`);
        }
        throw error;
      }
    }
    throw new Error(`effect ${effect.effectId}: could not record the resolution after ${MAX_RACES} races`);
  }
}

export type Resolution = Pick<EffectResolved, 'resolvedBy' | 'outcome' | 'reason'> & { receipt?: string };

export interface ResolvingShell {
  resolve(effect: EffectState, resolution: Resolution): Promise<EffectState>;
}

function invalidCommand(summary: string, issues: readonly { path: readonly PropertyKey[]; message: string }[], prefix: string[] = []): EffectdError {
  const fields = issues.map((i) => ({ path: [...prefix, ...i.path.map(String)].join('.') || '(body)', message: i.message }));
  return new EffectdError('invalid_command', `${summary}: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`, { fields });
}
