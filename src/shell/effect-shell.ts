import { effectCommand, type EffectCommand } from '../core/effect-command.js';
import { effectStatus, type EffectState } from '../core/effect-state.js';
import { EffectdError, isEffectdError } from '../core/errors.js';
import type { EffectResolved } from '../core/events.js';
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
    return {
      command,
      tool,
      effectId,
      stream: workflowStream(command.tenant, command.workflowId),
      declaration: {
        type: 'EffectDeclared', v: 1, effectId, tenant: command.tenant, workflowId: command.workflowId, step: command.step, slot: command.slot,
        tool: tool.name, contractVersion: tool.spec.version, intentDigest: intentDigest({ tool: tool.name, contractVersion: tool.spec.version, args: canonical, target }),
        args: canonical, target, principal: command.principal, ...(command.repeat ? { repeat: command.repeat } : {}),
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
        case 'declare':
        case 'claim': {
          const answer = await core.claimAndDispatch(effect, workflow, current);
          if (answer) return answer;
          continue; // someone else moved the stream: decide again
        }
      }
    }
    throw new Error(`effect ${effect.effectId}: gave up after ${MAX_RACES} concurrent appends to ${effect.stream}`);
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
