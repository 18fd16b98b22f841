import type { AgentOutcome } from '../core/agent-outcome.js';
import { contentKeyOf } from '../core/content-index.js';
import { effectCommand, type EffectCommand } from '../core/effect-command.js';
import { effectStatus, type EffectState } from '../core/effect-state.js';
import { EffectdError, invalidCommand } from '../core/errors.js';
import type { CanonicalArgs } from '../core/arg-fields.js';
import { lifecycleOf } from '../core/effect-lifecycle.js';
import { targetKeyOf, type WorkflowState } from '../core/fold.js';
import { deriveEffectId } from '../core/identity.js';
import { intentDigest } from '../core/intent.js';
import { stillLooking } from '../core/next-step.js';
import { workflowStream } from '../core/streams.js';
import type { Tool } from '../providers/tool-registry.js';
import { currentTraceparent } from '../tracing/index.js';
import { DecisionJournal } from './decision-journal.js';
import { EffectRunner } from './effect-runner.js';
import { ShellCore, type ShellDeps } from './shell-core.js';
import type { Actor, DecisionInput, DuplicateHandling, PreparedCommand, Resolution, ShellAnswer, ShellPort } from './shell-port.js';

export type { Dispatcher, Looker, ShellDeps } from './shell-core.js';
export type { Actor, Disposition, PreparedCommand, ShellAnswer } from './shell-port.js';

/** Traces are exported: the declaration keeps its command's traceparent, so later checks join that trace. */
const traceparentOf = (traceparent: string | undefined) => (traceparent !== undefined ? { traceparent } : {});

/**
 * The shell (docs/design.md, "The deterministic shell"), behind the one interface the application
 * layer uses: a command is checked against its tool (`prepare`), then the runner takes it as far as
 * it goes, deciding every step with the one decider (src/core/next-step.ts).
 */
export class EffectShell implements ShellPort {
  readonly core: ShellCore;
  /** Carries out the decider's steps: submissions, inline settles, the reconciler's schedule, operators' actions. */
  readonly runner: EffectRunner;
  /** The model's journaled decisions. */
  readonly journal: DecisionJournal;

  constructor(deps: ShellDeps) {
    this.core = new ShellCore(deps);
    this.runner = new EffectRunner(this.core, deps.tenantContentIndex, deps.onError ?? (() => {}));
    this.journal = new DecisionJournal(this.core);
  }

  /**
   * Validates a raw command against the wire schema and the tool's contract, for the tenant and
   * actor the gateway authenticated (never the ones a payload names). Throws `invalid_command` /
   * `unknown_tool`; a refused argument on a target the workflow already has a committed or
   * unknown effect on says that first (a model respelling an amount is deciding again).
   */
  async prepare(raw: unknown, as: Actor): Promise<PreparedCommand> {
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
    if (!args.success) throw await this.withTargetFacts(invalidCommand(`args do not fit tool ${tool.name}`, args.error.issues, ['args']), command, tool, as);
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

  /** The refusal of a well-formed command's arguments, with what the workflow already did on its target first. */
  private async withTargetFacts(error: EffectdError, command: EffectCommand, tool: Tool, as: Actor): Promise<EffectdError> {
    let target: string;
    try {
      target = tool.target(command.args as CanonicalArgs);
    } catch {
      return error;
    }
    const workflow = await this.core.read(workflowStream(as.tenant, command.workflowId));
    const now = this.core.now();
    const onTarget = (workflow.byTarget.get(targetKeyOf(tool.name, target)) ?? []).map((id) => workflow.effects.get(id)!).reverse();
    const done = onTarget.find((e) => effectStatus(e, now) === 'committed') ?? onTarget.find((e) => lifecycleOf(effectStatus(e, now)).agent === 'unknown');
    if (!done) return error;
    const answer = this.core.answer(done, true);
    const fact = answer.status === 'done' ? `${target} already had ${tool.name} in step ${done.declared.step} (receipt ${answer.receipt ?? 'recorded'}).` : `${tool.name} for ${target} from step ${done.declared.step} may have happened and is being checked.`;
    return new EffectdError('invalid_command', `${fact} ${error.message}`, { ...error.details, onTarget: { step: done.declared.step, effectId: done.effectId, status: answer.status, ...(answer.receipt ? { receipt: answer.receipt } : {}) } });
  }

  async execute(raw: unknown, as: Actor): Promise<ShellAnswer> {
    const effect = await this.prepare(raw, as);
    return this.runner.submit(effect).catch(async (error: unknown) => {
      throw await this.core.failedAfter(effect, error);
    });
  }

  /**
   * After a lost reply, the answer waits within its budget while reconciliation settles the effect
   * (docs/inline-settle.md): `done` or a proven `not_done` on the first call when the truth comes
   * in time, else `unknown` as before. An answer that is not `unknown` never waits.
   */
  async submit(effect: PreparedCommand, budgetMs: number): Promise<ShellAnswer> {
    // A failure says what the ledger holds for the effect by then (never "nothing was recorded" after a claim).
    const progress: { answer?: ShellAnswer } = {};
    return this.submitAndSettle(effect, budgetMs, progress).catch(async (error: unknown) => {
      throw await this.core.failedAfter(effect, error, progress.answer ? { known: progress.answer.outcome } : {});
    });
  }

  private async submitAndSettle(effect: PreparedCommand, budgetMs: number, progress: { answer?: ShellAnswer }): Promise<ShellAnswer> {
    const { runner } = this;
    const answer = await runner.submit(effect);
    progress.answer = answer;
    if (answer.outcome.status !== 'unknown' || answer.disposition === 'held' || budgetMs === 0) return answer;
    const current = (await this.core.read(effect.stream)).effects.get(effect.effectId);
    const ownDispatch = answer.disposition === 'dispatched';
    if (!current || !runner.worthWaiting(current, ownDispatch)) return answer;
    const { effect: settled, waitedMs } = await runner.settle(effect.stream, effect.effectId, budgetMs, ownDispatch);
    const outcome = this.core.answer(settled, false);
    return { outcome: { ...outcome, waitedMs }, disposition: outcome.status === 'unknown' ? answer.disposition : 'reconciled' };
  }

  decide(tenant: string, workflowId: string, input: DecisionInput, recordedBy: string) {
    return this.journal.decide(tenant, workflowId, input, recordedBy);
  }

  resolve(effect: EffectState, resolution: Resolution): Promise<EffectState> {
    return this.runner.resolve(effect, resolution);
  }

  release(effect: EffectState, releasedBy: string, reason: string): Promise<ShellAnswer> {
    return this.runner.release(effect, releasedBy, reason).catch(async (error: unknown) => {
      throw await this.core.failedAfter({ effectId: effect.effectId, stream: workflowStream(effect.declared.tenant, effect.declared.workflowId) }, error);
    });
  }

  withdraw(effect: EffectState, withdrawnBy: string, reason: string): Promise<EffectState> {
    return this.runner.withdraw(effect, withdrawnBy, reason);
  }

  handleDuplicate(effect: EffectState, handling: DuplicateHandling): Promise<EffectState> {
    return this.runner.handleDuplicate(effect, handling);
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
    return tool !== undefined && stillLooking(effect, now, tool.policy);
  }

  now(): number {
    return this.core.now();
  }
}
