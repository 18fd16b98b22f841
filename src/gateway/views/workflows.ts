import { needsHuman, unknownSinceAt, type EffectState } from '../../core/effect-state.js';
import { EffectdError, invalidCommand } from '../../core/errors.js';
import { isEffectEvent } from '../../core/events.js';
import { workflowStream } from '../../core/streams.js';
import { canSeeTenant, tenantOf, type Caller } from '../caller.js';
import { workflowIdOf, workflowListQuery } from '../inputs.js';
import { workflowState, type Reads } from '../reads.js';
import { recorded } from './effects.js';
import { describeEvent } from './timeline.js';
import { summarizeWorkflows } from './workflow-summaries.js';

/** Recent workflows the caller may see, most recently active first. */
export async function workflowList(reads: Reads, caller: Caller, query: unknown) {
  await reads.effects.fresh();
  const parsed = workflowListQuery.safeParse(query);
  if (!parsed.success) throw invalidCommand('invalid query', parsed.error.issues);
  const { tenant, limit, attention } = parsed.data;
  if (tenant !== undefined) tenantOf(caller, tenant);
  const byId = new Map<string, EffectState>();
  for (const e of reads.effects.recent()) byId.set(e.effectId, e);
  for (const e of reads.effects.open()) byId.set(e.effectId, e);
  const visible = [...byId.values()].filter((e) => canSeeTenant(caller, e.declared.tenant) && (!tenant || e.declared.tenant === tenant));
  const now = reads.now();
  const stillLooking = (e: EffectState, at: number) => reads.shell.stillLooking(e, at);
  const all = summarizeWorkflows(visible, now, stillLooking);
  const needHuman = visible.filter((e) => needsHuman(e, now, stillLooking(e, now))).length;
  const wanted = attention === '1' || attention === 'true' ? all.filter((w) => w.needsOperator) : all;
  const effects: Record<string, number> = {};
  for (const w of all) for (const [state, n] of Object.entries(w.states)) effects[state] = (effects[state] ?? 0) + n;
  return { total: wanted.length, effects, needHuman, workflows: wanted.slice(0, limit), window: `workflows with an open effect or one among the ${reads.effects.recentLimit.toLocaleString('en-US')} most recently active effects` };
}

/** The workflow's timeline: every intent, attempt, check and outcome in order, and each effect's state. */
export async function workflowTimeline(reads: Reads, caller: Caller, rawWorkflowId: string, tenantQuery?: string) {
  const tenant = tenantOf(caller, tenantQuery);
  const workflowId = workflowIdOf(rawWorkflowId);
  const stream = workflowStream(tenant, workflowId);
  const state = await reads.shell.read(stream);
  if (state.revision < 0) throw new EffectdError('not_found', `no workflow ${workflowId} for tenant ${tenant}`, { workflowId, tenant });
  // The one answer that is the whole stream: read it as recorded, with revisions and positions.
  const recordedEvents = await reads.ledger.readStream(stream);
  const now = reads.now();
  return {
    tenant,
    workflowId,
    revision: state.revision,
    effects: [...state.effects.values()].map((e) => ({
      ...recorded(reads, e, (id) => state.effects.get(id)), step: e.declared.step, slot: e.declared.slot, attempts: e.attempts.length,
      declaredAt: new Date(e.declared.at).toISOString(), declaredBy: e.declared.principal,
      ...(e.declared.onBehalfOf ? { onBehalfOf: e.declared.onBehalfOf } : {}),
      ...(unknownSinceAt(e, now) !== undefined ? { unknownSince: new Date(unknownSinceAt(e, now)!).toISOString() } : {}),
      ...(e.settledAt !== undefined ? { settledAt: new Date(e.settledAt).toISOString() } : {}),
      ...(e.resolvedBy ? { resolvedBy: e.resolvedBy } : {}),
    })),
    ...(state.saga ? { saga: await reads.sagaRunner.view(tenant, workflowId) } : {}),
    timeline: recordedEvents.map((r) => ({ revision: r.revision, position: r.position, at: new Date(r.event.at).toISOString(), type: r.event.type, effectId: isEffectEvent(r.event) ? r.event.effectId : undefined, summary: describeEvent(r.event), event: r.event })),
  };
}

/** The decisions journaled for a workflow, in the order they were recorded. */
export async function decisionList(reads: Reads, caller: Caller, workflowId: string, tenant?: string) {
  const state = await workflowState(reads, caller, workflowId, tenant);
  return { decisions: [...state.decisions.values()].map(decisionView) };
}

/**
 * What the model is told about earlier steps, built from the ledger (facts, not its context
 * window): each decided or executed step with its effects' three-state outcomes, in order.
 */
export async function stepHistory(reads: Reads, caller: Caller, workflowId: string, tenant?: string) {
  const state = await workflowState(reads, caller, workflowId, tenant);
  const steps = new Map<string, { step: string; decision?: { tool: string; args: Record<string, unknown> }; outcomes: unknown[]; at: number }>();
  for (const d of state.decisions.values()) steps.set(d.step, { step: d.step, decision: { tool: d.tool, args: d.args }, outcomes: [], at: d.at });
  for (const e of state.effects.values()) {
    const entry = steps.get(e.declared.step) ?? { step: e.declared.step, outcomes: [], at: e.declared.at };
    const { status, receipt, message, effectId } = recorded(reads, e, (id) => state.effects.get(id));
    entry.outcomes.push({ slot: e.declared.slot, effectId, status, ...(receipt ? { receipt } : {}), message });
    steps.set(e.declared.step, entry);
  }
  return { workflowId, steps: [...steps.values()].sort((a, b) => a.at - b.at).map(({ at: _at, ...rest }) => rest) };
}

/** A journaled decision as callers read it. */
export function decisionView(d: { step: string; tool: string; args: Record<string, unknown>; decidedBy?: string; recordedBy?: string; at: number }) {
  return { step: d.step, tool: d.tool, args: d.args, decidedBy: d.decidedBy, ...(d.recordedBy ? { recordedBy: d.recordedBy } : {}), at: new Date(d.at).toISOString() };
}
