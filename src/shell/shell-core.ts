import { agentOutcome, type AgentOutcome } from '../core/agent-outcome.js';
import { classifyDispatch } from '../core/classify.js';
import type { DispatchResult } from '../core/dispatch-result.js';
import { currentAttempt, type EffectState } from '../core/effect-state.js';
import { settleFrom } from '../core/reconcile-schedule.js';
import { isEffectdError } from '../core/errors.js';
import type { AttemptFinished, AttemptStarted, LedgerEvent } from '../core/events.js';
import { foldWorkflow, type WorkflowState } from '../core/fold.js';
import { deriveProviderKey, deriveReference } from '../core/identity.js';
import { NO_SECRETS, redactSecrets } from '../core/secret-redaction.js';
import { isLedgerUnreachable, type Ledger } from '../ledger/ledger.port.js';
import { noopShellMetrics, type ShellMetrics } from '../metrics/shell-metrics.js';
import { dispatch as providerDispatch, lookup as providerLookup, renderRequest, type DispatchInput, type LookupResult, type SentRequest } from '../providers/provider-router.js';
import type { Tool, ToolRegistry } from '../providers/tool-registry.js';
import { attemptAttributes, classificationAttributes, inSpan, SPAN, SpanKind } from '../tracing/index.js';
import { recordedFailure, saysNothingRecorded, type FailedAt } from './recorded-failure.js';
import { WorkflowStore, type Decision } from './workflow-store.js';
import type { PreparedEffect, ShellAnswer, TenantContentIndex } from './shell-port.js';

export type Dispatcher = (tool: Tool, input: DispatchInput) => Promise<DispatchResult>;
export type Looker = (tool: Tool, input: DispatchInput) => Promise<LookupResult>;

export interface ShellDeps {
  ledger: Ledger;
  tools: ToolRegistry;
  secret: Buffer;
  instanceId: string;
  clock?: () => number;
  dispatcher?: Dispatcher;
  looker?: Looker;
  metrics?: ShellMetrics;
  /** Added to the tool's timeout to size a claim's lease. */
  leaseMarginMs?: number;
  /** Finds an effect of the same content in the tenant's other workflows (the content index's tenant window). */
  tenantContentIndex?: TenantContentIndex;
  /** At most this many effects held in the workflow store's cache (default 20,000). */
  maxCachedEffects?: number;
  /** Told of a step that failed where no caller waits for it (an inline settle's background work). */
  onError?: (what: string, error: unknown) => void;
}

export type { Disposition, ShellAnswer } from './shell-port.js';

export type { PreparedEffect } from './shell-port.js';

/** Whether the rules accept these events on this state (the fold is the judge; nothing is written). */
export function accepts(workflow: WorkflowState, events: readonly LedgerEvent[]): boolean {
  return foldIfAccepted(workflow, events) !== undefined;
}

/** The state these events lead to, or undefined when the rules refuse them (nothing is written). */
export function foldIfAccepted(workflow: WorkflowState, events: readonly LedgerEvent[]): WorkflowState | undefined {
  try {
    return foldWorkflow(events, workflow);
  } catch (error) {
    if (isEffectdError(error, 'illegal_transition')) return undefined;
    throw error;
  }
}

/**
 * The primitives both the submission path and the reconciler use: the workflow store (read,
 * decide, append at the revision decided on), claim-dispatch-record, and the agent's answer.
 */
export class ShellCore {
  readonly now: () => number;
  readonly dispatcher: Dispatcher;
  readonly looker: Looker;
  readonly metrics: ShellMetrics;
  readonly store: WorkflowStore;
  private readonly leaseMarginMs: number;

  constructor(readonly deps: ShellDeps) {
    this.now = deps.clock ?? Date.now;
    this.dispatcher = deps.dispatcher ?? providerDispatch;
    this.looker = deps.looker ?? providerLookup;
    this.metrics = deps.metrics ?? noopShellMetrics;
    this.leaseMarginMs = deps.leaseMarginMs ?? 2_000;
    this.store = new WorkflowStore(deps.ledger, {
      ...(deps.maxCachedEffects !== undefined ? { maxCachedEffects: deps.maxCachedEffects } : {}),
      onAppend: (kind, ms) => this.metrics.ledgerAppend(kind, ms),
    });
  }

  read(stream: string): Promise<WorkflowState> {
    return this.store.read(stream);
  }

  update<T>(stream: string, decide: (state: WorkflowState) => Decision<T> | Promise<Decision<T>>): Promise<T> {
    return this.store.update(stream, decide);
  }

  /** The effect rebuilt from its declaration, for work that starts from the ledger (reconciler, resend). */
  prepared(effect: EffectState, stream: string): PreparedEffect | undefined {
    const tool = this.deps.tools.get(effect.declared.tool);
    if (!tool) return undefined;
    const { at: _at, ...declaration } = effect.declared;
    return { tool, effectId: effect.effectId, stream, declaration };
  }

  /**
   * The redaction boundary: every text derived from a provider exchange (an attempt's reason, a
   * check's asked and seen) passes here before it becomes an event, and so before the agent's
   * answer, the ledger, the timelines and the logs (src/core/secret-redaction.ts): the configured
   * secrets blanked, the provider key abridged, a URL's user and password left out.
   */
  exchangeText(text: string, providerKey: string | null): string {
    return redactSecrets(text, this.deps.tools.secrets ?? NO_SECRETS, providerKey);
  }

  /** Asks the provider whether the effect exists; what was asked and seen comes back through the redaction boundary. */
  async askProvider(effect: PreparedEffect, providerKey: string | null): Promise<LookupResult> {
    const result = await this.looker(effect.tool, this.dispatchInput(effect, providerKey));
    if (result.kind === 'unsupported') return result;
    return Object.assign({}, result, { asked: this.exchangeText(result.asked, providerKey), seen: this.exchangeText(result.seen, providerKey) });
  }

  dispatchInput(effect: PreparedEffect, providerKey: string | null, request?: SentRequest): DispatchInput {
    return { args: effect.declaration.args, providerKey, reference: deriveReference(effect.effectId), timeoutMs: effect.tool.spec.timeoutMs, ...(request ? { request } : {}) };
  }

  /**
   * The events that claim the effect for a new attempt (declaring it first when it is new): the
   * decision part of a claim, appended by the caller's `update`.
   */
  claimEvents(effect: PreparedEffect, current: EffectState | undefined): LedgerEvent[] {
    const now = this.now();
    const events: LedgerEvent[] = [];
    // Object.assign, not a spread: a spread adding `at` costs microseconds on Node 20 (see settle in fold.ts).
    if (!current) events.push(Object.assign({}, effect.declaration, { at: now }));
    const previous = current ? currentAttempt(current)?.started : undefined;
    const keyed = effect.tool.keyRetentionMs !== null;
    // A resend reuses the very key (and its expiry) of the first dispatch; a first dispatch derives it.
    const providerKey = previous ? previous.providerKey : keyed ? deriveProviderKey(this.deps.secret, effect.effectId, effect.tool.scope(effect.declaration.args)) : null;
    const keyExpiresAt = previous ? previous.keyExpiresAt : keyed ? now + effect.tool.keyRetentionMs! : null;
    // A resend sends what the first attempt sent (recorded then), never a request rebuilt from today's contract.
    const request = previous ? previous.request : renderRequest(effect.tool, this.dispatchInput(effect, providerKey));
    events.push({
      type: 'AttemptStarted', v: 1, at: now, effectId: effect.effectId, attempt: (current?.attempts.length ?? 0) + 1,
      instanceId: this.deps.instanceId, providerKey, leaseUntil: now + effect.tool.spec.timeoutMs + this.leaseMarginMs, keyExpiresAt,
      ...(request ? { request } : {}),
    });
    return events;
  }

  /**
   * A resend of an effect seen with `seenAttempts` attempts: claimed only if nobody moved it
   * meanwhile and the rules allow it (unknown, same key, key alive). Undefined: decide again.
   */
  claimResend(effect: PreparedEffect, seenAttempts: number): Promise<AttemptStarted | undefined> {
    return this.update(effect.stream, (workflow) => {
      const current = workflow.effects.get(effect.effectId);
      if (!current || current.attempts.length !== seenAttempts) return { answer: undefined };
      const claim = this.claimEvents(effect, current);
      const after = foldIfAccepted(workflow, claim);
      if (!after) return { answer: undefined };
      return { append: claim, after, answer: () => claim[claim.length - 1] as AttemptStarted };
    });
  }

  /** Dispatches a claimed attempt once and records its outcome before anyone is told. */
  async dispatchAndRecord(effect: PreparedEffect, started: AttemptStarted): Promise<ShellAnswer> {
    // The attempt span is the provider call: its request carries the span's traceparent.
    const { result, classification } = await inSpan(SPAN.attempt, SpanKind.CLIENT, async (span) => {
      span?.setAttributes(attemptAttributes(effect.effectId, effect.tool.name, started.attempt));
      const result = await this.dispatcher(effect.tool, this.dispatchInput(effect, started.providerKey, started.request));
      const classification = classifyDispatch(result, effect.tool.classification, (text) => this.exchangeText(text, started.providerKey));
      span?.setAttributes(classificationAttributes(classification));
      return { result, classification };
    });
    this.metrics.providerCall(effect.tool.name, result.latencyMs);
    this.metrics.attempt(effect.tool.name, classification.outcome);
    const finished: AttemptFinished = {
      type: 'AttemptFinished', v: 1, at: this.now(), effectId: effect.effectId, attempt: started.attempt, outcome: classification.outcome,
      ...(classification.outcome === 'committed' ? { receipt: classification.receipt ?? `ref:${deriveReference(effect.effectId)}` } : {}),
      ...(classification.httpStatus !== undefined ? { httpStatus: classification.httpStatus } : {}),
      ...(classification.neverSent ? { neverSent: true as const } : {}),
      replayed: classification.replayed, reason: classification.reason, latencyMs: Math.round(result.latencyMs * 1000) / 1000,
    };
    return this.update(effect.stream, (workflow): Decision<ShellAnswer> => {
      // Settled meanwhile (a human, or a newer attempt): the ledger's word stands.
      const folded = foldIfAccepted(workflow, [finished]);
      if (!folded) return { answer: { outcome: this.answer(workflow.effects.get(effect.effectId)!, true), disposition: 'replayed' } };
      return {
        append: [finished],
        after: folded,
        answer: (recorded) => {
          const after = recorded.effects.get(effect.effectId)!;
          // A same-key resend can settle an unknown effect too: that ends its time in unknown.
          if (after.settledAt === finished.at && after.unknownSince !== undefined) this.metrics.leftUnknown(effect.tool.name, finished.at - after.unknownSince);
          return { outcome: this.answer(after, false), disposition: 'dispatched' };
        },
      };
    }).catch(async (error: unknown) => {
      // The provider was called and the claim is recorded; only the outcome lost to other writers.
      // The claim's lease runs out into unknown and reconciliation finds the outcome: say so, truly.
      if (!isEffectdError(error, 'contention')) throw await this.failedAfter(effect, error, { sent: { attempt: started.attempt } });
      return { outcome: this.answer((await this.read(effect.stream)).effects.get(effect.effectId)!, false), disposition: 'in-flight' };
    });
  }

  /**
   * A failure of a command about `effect`, worded by what the ledger holds for it (read again; the
   * ledger may be the part that failed) and what the command got as far as: never "nothing was
   * recorded" once an attempt was claimed (src/shell/recorded-failure.ts).
   */
  async failedAfter(effect: Pick<PreparedEffect, 'effectId' | 'stream'>, error: unknown, at: FailedAt = {}): Promise<unknown> {
    if (!saysNothingRecorded(error)) return error;
    // An unreachable ledger is not asked again: that would only make the caller wait another timeout for the same 503.
    const held = isLedgerUnreachable(error) ? undefined : await this.read(effect.stream).then((w) => w.effects.get(effect.effectId), () => undefined);
    return recordedFailure(error, effect.effectId, held, held && this.answer(held, true), at);
  }

  answer(effect: EffectState, replayed: boolean, matched?: EffectState): AgentOutcome {
    const tool = this.deps.tools.get(effect.declared.tool);
    const last = currentAttempt(effect);
    const expectAnswerAt = last && tool ? Math.max(settleFrom(last) + tool.spec.settleWindowMs, this.now()) : undefined;
    return agentOutcome(effect, { now: this.now(), replayed, ...(expectAnswerAt !== undefined ? { expectAnswerAt } : {}), ...(matched ? { matched } : {}), ...(tool ? { policy: tool.policy } : {}) });
  }
}
