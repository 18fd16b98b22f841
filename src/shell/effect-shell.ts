import { effectCommand, type EffectCommand } from '../core/effect-command.js';
import type { EffectState } from '../core/effect-state.js';
import { EffectdError, invalidCommand, isEffectdError } from '../core/errors.js';
import type { EffectHeld } from '../core/events.js';
import { contentKeyOf, findContentMatch, holdsBack } from '../core/content-index.js';
import type { WorkflowState } from '../core/fold.js';
import { deriveEffectId } from '../core/identity.js';
import { intentDigest } from '../core/intent.js';
import { decideDispatch } from '../core/shell-decision.js';
import { workflowStream } from '../core/streams.js';
import { DecisionJournal } from './decision-journal.js';
import { OperatorActions } from './operator-actions.js';
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
  /** The model's journaled decisions. */
  readonly journal: DecisionJournal;
  /** What only operators do: resolve what effectd can't, release what it held. */
  readonly operators: OperatorActions;

  constructor(deps: ShellDeps) {
    this.core = new ShellCore(deps);
    this.reconciler = new Reconciler(this.core);
    this.journal = new DecisionJournal(this.core);
    this.operators = new OperatorActions(this.core);
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
      this.journal.check(effect, workflow);
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
}
