import { agentOutcome, type AgentOutcome } from '../core/agent-outcome.js';
import { classifyDispatch } from '../core/classify.js';
import type { DispatchResult } from '../core/dispatch-result.js';
import { currentAttempt, type EffectState } from '../core/effect-state.js';
import { effectCommand, type EffectCommand } from '../core/effect-command.js';
import { EffectdError, isEffectdError } from '../core/errors.js';
import type { AttemptFinished, AttemptStarted, EffectDeclared, LedgerEvent } from '../core/events.js';
import { evolveEffect, foldWorkflow, type WorkflowState } from '../core/fold.js';
import { deriveEffectId, deriveProviderKey, deriveReference } from '../core/identity.js';
import { intentDigest } from '../core/intent.js';
import { decideDispatch } from '../core/shell-decision.js';
import { workflowStream } from '../core/streams.js';
import type { Ledger } from '../ledger/ledger.port.js';
import { noopShellMetrics, type ShellMetrics } from '../metrics/shell-metrics.js';
import { dispatch as httpDispatch, type DispatchInput } from '../providers/http-provider.js';
import type { Tool, ToolRegistry } from '../providers/tool-registry.js';

export type Dispatcher = (tool: Tool, input: DispatchInput) => Promise<DispatchResult>;

export interface ShellDeps {
  ledger: Ledger;
  tools: ToolRegistry;
  secret: Buffer;
  instanceId: string;
  clock?: () => number;
  dispatcher?: Dispatcher;
  metrics?: ShellMetrics;
  /** Added to the tool's timeout to size a claim's lease. */
  leaseMarginMs?: number;
}

/** How the shell handled a command, for transports that map it to a status code. */
export type Disposition = 'dispatched' | 'replayed' | 'in-flight' | 'held-unknown';

export interface ShellAnswer {
  outcome: AgentOutcome;
  disposition: Disposition;
}

/** A command checked against its tool: everything the shell needs, nothing persisted yet. */
export interface PreparedEffect {
  command: EffectCommand;
  tool: Tool;
  effectId: string;
  stream: string;
  declaration: Omit<EffectDeclared, 'at'>;
}

const MAX_RACES = 20;

/**
 * The deterministic shell (DESIGN.md): fold → replay / conflict / back off / reconcile-first →
 * claim with the expected revision → dispatch once with the provider key → record before replying.
 */
export class EffectShell {
  private readonly now: () => number;
  private readonly dispatcher: Dispatcher;
  private readonly metrics: ShellMetrics;
  private readonly leaseMarginMs: number;

  constructor(private readonly deps: ShellDeps) {
    this.now = deps.clock ?? Date.now;
    this.dispatcher = deps.dispatcher ?? httpDispatch;
    this.metrics = deps.metrics ?? noopShellMetrics;
    this.leaseMarginMs = deps.leaseMarginMs ?? 2_000;
  }

  /** Validates a raw command against the wire schema and the tool's contract. Throws `invalid_command` / `unknown_tool`. */
  prepare(raw: unknown): PreparedEffect {
    const parsed = effectCommand.safeParse(raw);
    if (!parsed.success) throw invalidCommand('the command is malformed', parsed.error.issues);
    const command = parsed.data;
    const tool = this.deps.tools.get(command.tool);
    if (!tool) {
      const known = this.deps.tools.list().map((t) => t.name).join(', ');
      throw new EffectdError('unknown_tool', `unknown tool "${command.tool}"; known tools: ${known}`, { tool: command.tool });
    }
    const args = tool.schema.safeParse(command.args);
    if (!args.success) throw invalidCommand(`args do not fit tool ${tool.name}`, args.error.issues, ['args']);
    const effectId = deriveEffectId(this.deps.secret, command);
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

  async run(effect: PreparedEffect): Promise<ShellAnswer> {
    for (let race = 0; race < MAX_RACES; race++) {
      const workflow = await this.read(effect.stream);
      const current = workflow.effects.get(effect.effectId);
      const now = this.now();
      const decision = decideDispatch(current, effect.declaration.intentDigest, now, effect.tool.keyPolicy);
      switch (decision.kind) {
        case 'conflict':
          this.metrics.rejected('intent_conflict');
          throw new EffectdError('intent_conflict', `effect ${effect.effectId} (workflow ${effect.command.workflowId}, step ${effect.command.step}, slot ${effect.command.slot}) was declared with other arguments; a changed intent needs a new step`, { effectId: effect.effectId, recordedDigest: decision.recordedDigest, submittedDigest: effect.declaration.intentDigest });
        case 'replay':
          this.metrics.replayed(effect.tool.name);
          return { outcome: this.answer(current!, true), disposition: 'replayed' };
        case 'in-flight':
          return { outcome: this.answer(current!, true), disposition: 'in-flight' };
        case 'hold-unknown':
          return { outcome: this.answer(current!, true), disposition: 'held-unknown' };
        case 'declare':
        case 'claim':
        case 'retry-same-key': {
          const claim = this.claimEvents(effect, current, now);
          let claimed: WorkflowState;
          try {
            claimed = await this.append(effect.stream, workflow, claim);
          } catch (error) {
            if (isEffectdError(error, 'concurrency_conflict')) continue; // someone else moved the stream: decide again
            throw error;
          }
          const started = claim[claim.length - 1] as AttemptStarted;
          return this.dispatchAndRecord(effect, started, claimed);
        }
      }
    }
    throw new Error(`effect ${effect.effectId}: gave up after ${MAX_RACES} concurrent appends to ${effect.stream}`);
  }

  private claimEvents(effect: PreparedEffect, current: EffectState | undefined, now: number): LedgerEvent[] {
    const events: LedgerEvent[] = [];
    if (!current) events.push({ ...effect.declaration, at: now });
    const previous = current ? currentAttempt(current)?.started : undefined;
    const keyed = effect.tool.keyRetentionMs !== null;
    const providerKey = previous?.providerKey ?? (keyed ? deriveProviderKey(this.deps.secret, effect.effectId, effect.tool.scope(effect.declaration.args)) : null);
    const keyExpiresAt = previous ? previous.keyExpiresAt : keyed ? now + effect.tool.keyRetentionMs! : null;
    events.push({
      type: 'AttemptStarted', v: 1, at: now, effectId: effect.effectId, attempt: (current?.attempts.length ?? 0) + 1,
      instanceId: this.deps.instanceId, providerKey, leaseUntil: now + effect.tool.spec.timeoutMs + this.leaseMarginMs, keyExpiresAt,
    });
    return events;
  }

  private async dispatchAndRecord(effect: PreparedEffect, started: AttemptStarted, claimed: WorkflowState): Promise<ShellAnswer> {
    const result = await this.dispatcher(effect.tool, {
      args: effect.declaration.args, providerKey: started.providerKey, reference: deriveReference(effect.effectId), timeoutMs: effect.tool.spec.timeoutMs,
    });
    this.metrics.providerCall(effect.tool.name, result.latencyMs);
    const classification = classifyDispatch(result, effect.tool.classification);
    this.metrics.attempt(effect.tool.name, classification.outcome);
    const finished: AttemptFinished = {
      type: 'AttemptFinished', v: 1, at: this.now(), effectId: effect.effectId, attempt: started.attempt, outcome: classification.outcome,
      ...(classification.outcome === 'committed' ? { receipt: classification.receipt ?? `ref:${deriveReference(effect.effectId)}` } : {}),
      ...(classification.httpStatus !== undefined ? { httpStatus: classification.httpStatus } : {}),
      replayed: classification.replayed, reason: classification.reason, latencyMs: Math.round(result.latencyMs * 1000) / 1000,
    };
    // Record before anyone is told. Other effects of the workflow may have appended meanwhile:
    // then re-read and append again until it lands or the rules say the effect moved on.
    for (let race = 0; race < MAX_RACES; race++) {
      const workflow = race === 0 ? claimed : await this.read(effect.stream);
      try {
        const recorded = await this.append(effect.stream, workflow, [finished]);
        return { outcome: this.answer(recorded.effects.get(effect.effectId)!, false), disposition: 'dispatched' };
      } catch (error) {
        if (isEffectdError(error, 'concurrency_conflict')) continue;
        if (isEffectdError(error, 'illegal_transition')) {
          // Settled meanwhile (a human, or a newer attempt): the ledger's word stands.
          return { outcome: this.answer(workflow.effects.get(effect.effectId)!, true), disposition: 'replayed' };
        }
        throw error;
      }
    }
    throw new Error(`effect ${effect.effectId}: could not record the outcome of attempt ${started.attempt} after ${MAX_RACES} races`);
  }

  /** Checks the events against the rules, appends them at the revision they were decided on, returns the new state. */
  private async append(stream: string, workflow: WorkflowState, events: LedgerEvent[]): Promise<WorkflowState> {
    const next = foldWorkflow(events, workflow);
    const started = performance.now();
    await this.deps.ledger.append(stream, events, workflow.revision);
    this.metrics.ledgerAppend(this.deps.ledger.kind, performance.now() - started);
    return next;
  }

  private async read(stream: string): Promise<WorkflowState> {
    return foldWorkflow((await this.deps.ledger.readStream(stream)).map((r) => r.event));
  }

  private answer(effect: EffectState, replayed: boolean): AgentOutcome {
    const tool = this.deps.tools.get(effect.declared.tool);
    const last = currentAttempt(effect)?.started;
    const expectAnswerAt = last && tool ? last.at + tool.spec.settleWindowMs : undefined;
    return agentOutcome(effect, { now: this.now(), replayed, ...(expectAnswerAt !== undefined ? { expectAnswerAt } : {}) });
  }
}

function invalidCommand(summary: string, issues: readonly { path: readonly PropertyKey[]; message: string }[], prefix: string[] = []): EffectdError {
  const fields = issues.map((i) => ({ path: [...prefix, ...i.path.map(String)].join('.') || '(body)', message: i.message }));
  return new EffectdError('invalid_command', `${summary}: ${fields.map((f) => `${f.path}: ${f.message}`).join('; ')}`, { fields });
}
