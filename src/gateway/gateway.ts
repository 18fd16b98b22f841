import { OPEN_STATUSES } from '../core/effect-lifecycle.js';
import type { AgentOutcome } from '../core/agent-outcome.js';
import { answerBudgetSettings, resolveAnswerBudget, type AnswerBudgetSettings } from '../core/answer-budget.js';
import { effectStatus, needsHuman, unhandledDuplicates, unknownSinceAt, type EffectState } from '../core/effect-state.js';
import { EffectdError, invalidCommand } from '../core/errors.js';
import { isEffectEvent } from '../core/events.js';
import type { WorkflowState } from '../core/fold.js';
import type { EffectAddress } from '../core/identity.js';
import { workflowStream } from '../core/streams.js';
import type { Ledger } from '../ledger/ledger.port.js';
import type { CredentialBook } from '../runtime/credentials.js';
import { fillJson } from '../providers/templates.js';
import { describeEvent } from '../runtime/timeline.js';
import { summarizeWorkflows } from '../runtime/workflow-summaries.js';
import type { Disposition, ShellPort } from '../shell/shell-port.js';
import { sagaNameOf, sagaOutcome } from '../shell/saga-outcome.js';
import type { SagaRegistry } from '../shell/saga-registry.js';
import type { SagaRunner, SagaView } from '../shell/saga-runner.js';
import { callerOf, canSeeTenant, tenantOf, type Caller, type Ingress } from './caller.js';
import { ATTR, commandAttributes, commandSpanKind, inSpan, sagaCommandAttributes, SPAN, withCommandTrace } from '../tracing/index.js';
import { compareForList, decodeEffectCursor, encodeEffectCursor, isAfter } from './effect-list-cursor.js';
import { decisionInput, duplicateHandlingInput, effectListQuery, releaseInput, resolutionInput, sagaInputField, sagaStartInput, workflowIdField, workflowListQuery } from './inputs.js';

/** Where the gateway finds effects it is asked about, without reading the whole ledger. */
export interface EffectIndex {
  /** The stream of an effect, by its id (an index, or the recent and open views). */
  locate(effectId: string): Promise<string | undefined>;
  /** Brings the open and recent views up to the ledger's head (the events since their last catch-up). */
  fresh(): Promise<void>;
  /** Every effect not settled for good (unknown, in flight, escalated, terminal, held, declared). */
  open(): Iterable<EffectState>;
  /** The most recently active effects, at most `recentLimit` of them. */
  recent(): Iterable<EffectState>;
  /** An effect from the open or recent views, as of the last catch-up (no ledger read). */
  known(effectId: string): EffectState | undefined;
  readonly recentLimit: number;
}

export interface GatewayParts {
  shell: ShellPort;
  sagaRunner: SagaRunner;
  sagas: SagaRegistry;
  credentials: CredentialBook;
  ledger: Ledger;
  effects: EffectIndex;
  now: () => number;
  /** Answer budgets after a lost reply (inline settle); EFFECTD_ANSWER_BUDGET_MS / _MAX_MS when absent. */
  answerBudget?: AnswerBudgetSettings;
}

export interface SubmitOptions {
  /** How long the caller will wait for a lost reply to be settled, in ms (HTTP `Prefer: wait`, Kafka `waitMs`, MCP `_meta`); the tool's default when absent. */
  waitMs?: number;
}

/** What a submission came to: the three-state outcome, how the shell got there, and where the effect sits. */
export interface Submitted {
  outcome: AgentOutcome;
  disposition: Disposition | 'saga';
  address: EffectAddress;
  /** The caller's wait was applied, as this budget in ms (capped at EFFECTD_ANSWER_BUDGET_MAX_MS). */
  waitApplied?: number;
}

/** States only an unsettled effect is in: lists of them are complete (from the open view), not just recent. */
const OPEN_STATES: ReadonlySet<string> = OPEN_STATUSES;

/**
 * The application layer: every use case, for every front door (HTTP, Kafka, MCP, CLI). It takes an
 * authenticated caller, never a tenant or an actor from the payload, and answers in effectd's own
 * terms (outcomes, views, coded errors); transports only map those to their wire.
 */
export class Gateway {
  private readonly budget: AnswerBudgetSettings;

  constructor(private readonly parts: GatewayParts) {
    this.budget = parts.answerBudget ?? answerBudgetSettings(process.env);
  }

  /** The caller behind a credential, or `unauthorized`. */
  authenticate(token: string | undefined, ingress: Ingress): Caller {
    if (!token) throw new EffectdError('unauthorized', 'missing credentials: send the bearer token of an effectd credential (the embedded default writes them to <data-dir>/credentials.json)');
    const principal = this.parts.credentials.authenticate(token);
    if (!principal) throw new EffectdError('unauthorized', 'unknown or revoked token');
    return callerOf(principal, ingress);
  }

  /** An effect command; `tool: "saga:<name>"` starts that saga instead (args = its input). One `effectd.command` span. */
  submit(caller: Caller, raw: unknown, options: SubmitOptions = {}): Promise<Submitted> {
    // A child of the caller's span: from the transport (header, _meta), else the command's own `trace` field.
    return withCommandTrace(raw, () => inSpan(SPAN.command, commandSpanKind(caller.ingress), async (span) => {
      span?.setAttribute(ATTR.ingress, caller.ingress);
      const submitted = await this.submitCommand(caller, raw, options);
      span?.setAttributes(commandAttributes(submitted));
      return submitted;
    }));
  }

  private async submitCommand(caller: Caller, raw: unknown, options: SubmitOptions): Promise<Submitted> {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new EffectdError('invalid_command', 'the command must be a JSON object (an effect command: workflowId, step, tool, args)');
    const command = raw as Record<string, unknown>;
    const tenant = tenantOf(caller, command.tenant);
    const onBehalfOf = typeof command.principal === 'string' ? command.principal : undefined;
    const sagaName = typeof command.tool === 'string' ? sagaNameOf(command.tool) : undefined;
    if (sagaName !== undefined) return this.submitSaga(caller, tenant, sagaName, command);
    const prepared = this.parts.shell.prepare(command, { tenant, actor: caller.name, ...(onBehalfOf !== undefined ? { onBehalfOf } : {}) });
    const budget = resolveAnswerBudget(prepared.tool.spec, this.budget, options.waitMs);
    const answer = await this.parts.shell.submit(prepared, budget.ms);
    // Object.assign, not a spread: a spread adding `address` costs microseconds on Node 20 (see settle in src/core/fold.ts).
    return Object.assign({}, answer, budget.requested ? { waitApplied: budget.ms } : {}, { address: prepared.address });
  }

  private async submitSaga(caller: Caller, tenant: string, name: string, command: Record<string, unknown>): Promise<Submitted> {
    const workflowId = workflowIdField.safeParse(command.workflowId);
    if (!workflowId.success) throw invalidCommand('the command is malformed', workflowId.error.issues, ['workflowId']);
    const input = sagaInputField.safeParse(command.args);
    if (!input.success) throw invalidCommand('the command is malformed', input.error.issues, ['args']);
    if (!this.parts.sagas.get(name)) {
      throw new EffectdError('unknown_tool', `unknown tool "saga:${name}": no saga "${name}" is registered; registered sagas: ${this.parts.sagas.names().join(', ') || 'none'}`, { tool: `saga:${name}` });
    }
    const view = await this.parts.sagaRunner.start(tenant, workflowId.data, name, command.args, caller.name);
    return { outcome: sagaOutcome(view), disposition: 'saga', address: { tenant, workflowId: workflowId.data, step: 'saga', slot: '0' } };
  }

  /** A saga start (`POST /v1/sagas`): one `effectd.command` span, its steps' spans under it. */
  startSaga(caller: Caller, body: unknown): Promise<SagaView> {
    return inSpan(SPAN.command, commandSpanKind(caller.ingress), async (span) => {
      span?.setAttribute(ATTR.ingress, caller.ingress);
      const parsed = sagaStartInput.safeParse(body);
      if (!parsed.success) throw invalidCommand('invalid saga start', parsed.error.issues);
      const { saga, workflowId, input, tenant } = parsed.data;
      const view = await this.parts.sagaRunner.start(tenantOf(caller, tenant), workflowId, saga, input, caller.name);
      span?.setAttributes(sagaCommandAttributes(view));
      return view;
    });
  }

  saga(caller: Caller, workflowId: string, tenant?: string): Promise<SagaView> {
    return this.parts.sagaRunner.view(tenantOf(caller, tenant), this.workflowId(workflowId));
  }

  sagaDefinitions() {
    const { sagas } = this.parts;
    return {
      sagas: sagas.names().map((name) => {
        const saga = sagas.get(name)!;
        return { name, version: saga.version, description: saga.description, steps: saga.steps.map((s) => ({ name: s.name, tool: s.tool, reversibility: s.reversibility, compensation: s.compensation?.name })) };
      }),
      unavailable: sagas.notAvailable().map(([name, why]) => ({ name, why })),
    };
  }

  /** One effect, its state, outcome and every event about it (the evidence). */
  async effect(caller: Caller, effectId: string) {
    return this.detailed(await this.visibleEffect(caller, effectId));
  }

  /**
   * Effects by state, newest first. States an unsettled effect is in (`attention` = escalated +
   * terminal_failure, the operator queue) are listed completely; others come from the recent window.
   */
  async effects(caller: Caller, query: unknown) {
    await this.parts.effects.fresh();
    const parsed = effectListQuery.safeParse(query);
    if (!parsed.success) throw invalidCommand('invalid query', parsed.error.issues);
    const { state, tenant, limit } = parsed.data;
    const after = parsed.data.cursor === undefined ? undefined : decodeEffectCursor(parsed.data.cursor);
    if (tenant !== undefined) tenantOf(caller, tenant);
    const attention = state === 'attention';
    const wanted = state && !attention ? new Set(state.split(',')) : undefined;
    // What needs a human is always open (a detected duplicate stays open until it is dealt with).
    const complete = attention || (wanted !== undefined && [...wanted].every((s) => OPEN_STATES.has(s)));
    const now = this.parts.now();
    const matching = [...(complete ? this.parts.effects.open() : this.parts.effects.recent())]
      .filter((e) => canSeeTenant(caller, e.declared.tenant) && (!tenant || e.declared.tenant === tenant))
      .filter((e) => (attention ? needsHuman(e, now, this.stillLooking(e, now)) : !wanted || wanted.has(effectStatus(e, now))))
      .filter((e) => !after || isAfter(e, after))
      .sort(compareForList);
    const page = matching.slice(0, limit);
    const nextCursor = matching.length > limit ? encodeEffectCursor(page[page.length - 1]!) : undefined;
    return {
      effects: page.map((e) => this.view(e)),
      ...(nextCursor ? { nextCursor, cutShort: `${matching.length - limit} more match; the next page is ?cursor=${nextCursor} (same state and tenant), or narrow by state or tenant` } : {}),
      ...(complete ? {} : { window: `the ${this.parts.effects.recentLimit.toLocaleString('en-US')} most recently active effects; older ones are found by id (GET /v1/effects/:id) or by workflow` }),
    };
  }

  /** Recent workflows the caller may see, most recently active first. */
  async workflows(caller: Caller, query: unknown) {
    await this.parts.effects.fresh();
    const parsed = workflowListQuery.safeParse(query);
    if (!parsed.success) throw invalidCommand('invalid query', parsed.error.issues);
    const { tenant, limit, attention } = parsed.data;
    if (tenant !== undefined) tenantOf(caller, tenant);
    const byId = new Map<string, EffectState>();
    for (const e of this.parts.effects.recent()) byId.set(e.effectId, e);
    for (const e of this.parts.effects.open()) byId.set(e.effectId, e);
    const visible = [...byId.values()].filter((e) => canSeeTenant(caller, e.declared.tenant) && (!tenant || e.declared.tenant === tenant));
    const now = this.parts.now();
    const all = summarizeWorkflows(visible, now, (e, at) => this.stillLooking(e, at));
    const needHuman = visible.filter((e) => needsHuman(e, now, this.stillLooking(e, now))).length;
    const wanted = attention === '1' || attention === 'true' ? all.filter((w) => w.needsOperator) : all;
    const effects: Record<string, number> = {};
    for (const w of all) for (const [state, n] of Object.entries(w.states)) effects[state] = (effects[state] ?? 0) + n;
    return { total: wanted.length, effects, needHuman, workflows: wanted.slice(0, limit), window: `workflows with an open effect or one among the ${this.parts.effects.recentLimit.toLocaleString('en-US')} most recently active effects` };
  }

  /** The workflow's timeline: every intent, attempt, check and outcome in order, and each effect's state. */
  async workflow(caller: Caller, workflowId: string, tenantQuery?: string) {
    const tenant = tenantOf(caller, tenantQuery);
    workflowId = this.workflowId(workflowId);
    const stream = workflowStream(tenant, workflowId);
    const state = await this.parts.shell.read(stream);
    if (state.revision < 0) throw new EffectdError('not_found', `no workflow ${workflowId} for tenant ${tenant}`, { workflowId, tenant });
    // The one answer that is the whole stream: read it as recorded, with revisions and positions.
    const recorded = await this.parts.ledger.readStream(stream);
    const now = this.parts.now();
    return {
      tenant,
      workflowId,
      revision: state.revision,
      effects: [...state.effects.values()].map((e) => ({
        ...this.recorded(e, (id) => state.effects.get(id)), step: e.declared.step, slot: e.declared.slot, attempts: e.attempts.length,
        declaredAt: new Date(e.declared.at).toISOString(), declaredBy: e.declared.principal,
        ...(e.declared.onBehalfOf ? { onBehalfOf: e.declared.onBehalfOf } : {}),
        ...(unknownSinceAt(e, now) !== undefined ? { unknownSince: new Date(unknownSinceAt(e, now)!).toISOString() } : {}),
        ...(e.settledAt !== undefined ? { settledAt: new Date(e.settledAt).toISOString() } : {}),
        ...(e.resolvedBy ? { resolvedBy: e.resolvedBy } : {}),
      })),
      ...(state.saga ? { saga: await this.parts.sagaRunner.view(tenant, workflowId) } : {}),
      timeline: recorded.map((r) => ({ revision: r.revision, position: r.position, at: new Date(r.event.at).toISOString(), type: r.event.type, effectId: isEffectEvent(r.event) ? r.event.effectId : undefined, summary: describeEvent(r.event), event: r.event })),
    };
  }

  /** Journals the model's decision for a step before acting; `replayed` when the step was decided already. */
  async decide(caller: Caller, workflowId: string, body: unknown) {
    const parsed = decisionInput.safeParse(body);
    if (!parsed.success) throw invalidCommand('invalid decision', parsed.error.issues);
    const { tenant, ...input } = parsed.data;
    const id = this.workflowId(workflowId);
    const result = await this.parts.shell.decide(tenantOf(caller, tenant), id, input, caller.name);
    return { replayed: result.replayed, decision: decisionView(result.decision) };
  }

  async decisions(caller: Caller, workflowId: string, tenant?: string) {
    const state = await this.state(caller, workflowId, tenant);
    return { decisions: [...state.decisions.values()].map(decisionView) };
  }

  /**
   * What the model is told about earlier steps, built from the ledger (facts, not its context
   * window): each decided or executed step with its effects' three-state outcomes, in order.
   */
  async history(caller: Caller, workflowId: string, tenant?: string) {
    const state = await this.state(caller, workflowId, tenant);
    const now = this.parts.now();
    const steps = new Map<string, { step: string; decision?: { tool: string; args: Record<string, unknown> }; outcomes: unknown[]; at: number }>();
    for (const d of state.decisions.values()) steps.set(d.step, { step: d.step, decision: { tool: d.tool, args: d.args }, outcomes: [], at: d.at });
    for (const e of state.effects.values()) {
      const entry = steps.get(e.declared.step) ?? { step: e.declared.step, outcomes: [], at: e.declared.at };
      const { status, receipt, message, effectId } = this.recorded(e, (id) => state.effects.get(id));
      entry.outcomes.push({ slot: e.declared.slot, effectId, status, ...(receipt ? { receipt } : {}), message });
      steps.set(e.declared.step, entry);
    }
    return { workflowId, steps: [...steps.values()].sort((a, b) => a.at - b.at).map(({ at: _at, ...rest }) => rest) };
  }

  /** An operator settles an escalated, terminal or unknown effect with what they found at the provider. */
  async resolve(caller: Caller, effectId: string, body: unknown) {
    this.operatorOnly(caller, 'resolve an effect');
    const parsed = resolutionInput.safeParse(body);
    if (!parsed.success) throw invalidCommand('invalid resolution', parsed.error.issues);
    const effect = await this.visibleEffect(caller, effectId);
    const { outcome, receipt, reason } = parsed.data;
    const resolved = await this.parts.shell.resolve(effect, { resolvedBy: caller.name, outcome: outcome === 'committed' ? 'committed' : 'failed_before_effect', reason, ...(receipt ? { receipt } : {}) });
    return this.detailed(resolved);
  }

  /** An operator lets a held effect go (the repeat the agent should have declared): it is dispatched now. */
  async release(caller: Caller, effectId: string, body: unknown): Promise<AgentOutcome> {
    this.operatorOnly(caller, 'release a held effect');
    const parsed = releaseInput.safeParse(body ?? {});
    if (!parsed.success) throw invalidCommand('invalid release', parsed.error.issues);
    const answer = await this.parts.shell.release(await this.visibleEffect(caller, effectId), caller.name, parsed.data.reason);
    return answer.outcome;
  }

  /**
   * An operator deals with one extra object of a detected duplicate: `compensate` runs the tool's
   * declared undo for that receipt as an effect of its own (keyed, reconciled), `keep` leaves it.
   */
  async handleDuplicate(caller: Caller, effectId: string, receipt: string, body: unknown) {
    this.operatorOnly(caller, 'handle a duplicate');
    const parsed = duplicateHandlingInput.safeParse(body);
    if (!parsed.success) throw invalidCommand('invalid duplicate handling', parsed.error.issues);
    const effect = await this.visibleEffect(caller, effectId);
    if (!unhandledDuplicates(effect).includes(receipt)) {
      throw new EffectdError('illegal_transition', `receipt ${receipt} is not an unhandled extra object of effect ${effectId} (unhandled: ${unhandledDuplicates(effect).join(', ') || 'none'})`, { effectId, receipt });
    }
    const { action, reason } = parsed.data;
    let compensationEffectId: string | undefined;
    if (action === 'compensate') {
      const undo = this.parts.shell.tool(effect.declared.tool)?.spec.undo;
      if (!undo) throw new EffectdError('invalid_command', `tool ${effect.declared.tool} declares no undo: compensate ${receipt} at the provider by hand, then record it with "action": "keep" and what you did`, { tool: effect.declared.tool });
      const { declared } = effect;
      const undone = await this.parts.shell.execute(
        { workflowId: declared.workflowId, step: `undo-duplicate:${declared.step}:${declared.slot}`, slot: receipt, tool: undo.tool, args: fillJson(undo.args, { args: declared.args, provider: {}, receipt }) },
        { tenant: declared.tenant, actor: caller.name },
      );
      if (undone.outcome.status === 'not_done') throw new EffectdError('illegal_transition', `the undo of ${receipt} did not happen: ${undone.outcome.message}`, { effectId, receipt, undo: undone.outcome });
      compensationEffectId = undone.outcome.effectId;
    }
    const handled = await this.parts.shell.handleDuplicate(effect, { receipt, action: action === 'compensate' ? 'compensated' : 'kept', handledBy: caller.name, reason, ...(compensationEffectId ? { compensationEffectId } : {}) });
    return this.detailed(handled);
  }

  /** An effect's outcome read back, as the shell answers it (a held one with the state of what it was held against). */
  private recorded(effect: EffectState, find: (effectId: string) => EffectState | undefined): AgentOutcome {
    const matched = effect.heldBy ? find(effect.heldBy.effectId) : undefined;
    return this.parts.shell.answer(effect, true, matched);
  }

  /** The reconciler still has a step to take for it (a poisoned key is looked up through its settle window). */
  private stillLooking(effect: EffectState, now: number): boolean {
    return this.parts.shell.stillLooking(effect, now);
  }

  private operatorOnly(caller: Caller, what: string): void {
    if (caller.role !== 'operator') throw new EffectdError('forbidden', `${caller.name} is an agent credential; only operator credentials may ${what}`);
  }

  private workflowId(raw: string): string {
    const parsed = workflowIdField.safeParse(raw);
    if (!parsed.success) throw invalidCommand('invalid workflow id', parsed.error.issues, ['workflowId']);
    return parsed.data;
  }

  private state(caller: Caller, workflowId: string, tenant?: string): Promise<WorkflowState> {
    return this.parts.shell.read(workflowStream(tenantOf(caller, tenant), this.workflowId(workflowId)));
  }

  private async visibleEffect(caller: Caller, effectId: string): Promise<EffectState> {
    const stream = await this.parts.effects.locate(effectId);
    const effect = stream ? (await this.parts.shell.read(stream)).effects.get(effectId) : undefined;
    if (!effect) throw new EffectdError('not_found', `no effect ${effectId}`, { effectId });
    if (!canSeeTenant(caller, effect.declared.tenant)) throw new EffectdError('forbidden', `effect ${effectId} belongs to another tenant`, { effectId });
    return effect;
  }

  /** The effect with its whole history: every intent, attempt, check, escalation and resolution, in order. */
  private async detailed(effect: EffectState) {
    const matched = effect.heldBy ? await this.matched(effect) : undefined;
    return { ...this.view(effect, matched), args: effect.declared.args, evidence: effect.log.map((e) => ({ at: new Date(e.at).toISOString(), type: e.type, summary: describeEvent(e) })) };
  }

  private async matched(effect: EffectState): Promise<EffectState | undefined> {
    const by = effect.heldBy!;
    return (await this.parts.shell.read(workflowStream(effect.declared.tenant, by.workflowId ?? effect.declared.workflowId))).effects.get(by.effectId);
  }

  private view(effect: EffectState, matched?: EffectState) {
    const { tenant, workflowId, step, slot, principal, onBehalfOf } = effect.declared;
    const now = this.parts.now();
    const held = matched ?? (effect.heldBy ? this.parts.effects.known(effect.heldBy.effectId) : undefined);
    return {
      ...this.recorded(effect, () => held),
      tenant, workflowId, step, slot, declaredBy: principal, ...(onBehalfOf ? { onBehalfOf } : {}), attempts: effect.attempts.length,
      ...(effect.unknownSince !== undefined ? { unknownSince: new Date(effect.unknownSince).toISOString() } : {}),
      ...(effect.resolvedBy ? { resolvedBy: effect.resolvedBy } : {}),
      ...(effect.audit?.verdict === 'duplicates' ? { duplicates: duplicatesView(effect, this.parts.shell.tool(effect.declared.tool)?.spec.undo?.tool) } : {}),
    };
  }
}

/** A detected duplicate as operators see it: every object, which ones still need a decision, and the undo on offer. */
function duplicatesView(effect: EffectState, undoTool: string | undefined) {
  const audit = effect.audit as Extract<EffectState['audit'], { verdict: 'duplicates' }>;
  return { receipts: audit.receipts, own: effect.receipt, unhandled: unhandledDuplicates(effect), handled: audit.handled, detectedAt: new Date(audit.at).toISOString(), ...(undoTool ? { undoTool } : {}) };
}

function decisionView(d: { step: string; tool: string; args: Record<string, unknown>; decidedBy?: string; recordedBy?: string; at: number }) {
  return { step: d.step, tool: d.tool, args: d.args, decidedBy: d.decidedBy, ...(d.recordedBy ? { recordedBy: d.recordedBy } : {}), at: new Date(d.at).toISOString() };
}

export type { Caller, Ingress } from './caller.js';
