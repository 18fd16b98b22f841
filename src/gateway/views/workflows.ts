import { needsHuman, unknownSinceAt, type EffectState } from '../../core/effect-state.js';
import { EffectdError } from '../../core/errors.js';
import { isEffectEvent } from '../../core/events.js';
import { workflowStream } from '../../core/streams.js';
import { canSeeTenant, tenantOf, type Caller } from '../caller.js';
import { workflowIdOf, workflowListQuery } from '../inputs.js';
import { workflowState, type Reads } from '../reads.js';
import type { SagaView } from '../../shell/saga-runner.js';
import { matchesSearch, openAndRecent, recorded } from './effects.js';
import { describeEvent, eventsFor } from './timeline.js';
import { listQuery } from './list-cursors.js';
import { compareWorkflows, decodeWorkflowCursor, encodeWorkflowCursor, type WorkflowListPosition } from './workflow-list-cursor.js';
import { summarizeWorkflows, type WorkflowSummary } from './workflow-summaries.js';

/** Recent workflows the caller may see, most recently active first. */
export async function workflowList(reads: Reads, caller: Caller, query: unknown) {
  await reads.effects.fresh();
  const { data, after } = listQuery(workflowListQuery, query, (cursor) => decodeWorkflowCursor(reads.cursors, cursor));
  const { tenant, limit, attention, saga, q } = data;
  if (tenant !== undefined) tenantOf(caller, tenant);
  const visible = openAndRecent(reads).filter((e) => canSeeTenant(caller, e.declared.tenant) && (!tenant || e.declared.tenant === tenant));
  const now = reads.now();
  const stillLooking = (e: EffectState, at: number) => reads.shell.stillLooking(e, at);
  const all = summarizeWorkflows(visible, now, stillLooking);
  const needHuman = visible.filter((e) => needsHuman(e, now, stillLooking(e, now))).length;
  const yes = (flag: string | undefined) => flag === '1' || flag === 'true';
  // A workflow matches a search when its id does, or one of its effects does (id, tool, target, receipt).
  const needle = q?.toLowerCase();
  const found = needle ? new Set(visible.filter((e) => matchesSearch(e, needle)).map((e) => `${e.declared.tenant}\u0000${e.declared.workflowId}`)) : undefined;
  const wanted = all
    .filter((w) => !yes(attention) || w.needsOperator)
    .filter((w) => !yes(saga) || w.saga !== undefined)
    .filter((w) => !found || found.has(`${w.tenant}\u0000${w.workflowId}`));
  const rest = after ? wanted.filter((w) => compareWorkflows(after, position(w)) < 0) : wanted;
  const page = rest.slice(0, limit);
  const nextCursor = rest.length > limit ? encodeWorkflowCursor(reads.cursors, position(page[page.length - 1]!)) : undefined;
  const effects: Record<string, number> = {};
  for (const w of all) for (const [state, n] of Object.entries(w.states)) effects[state] = (effects[state] ?? 0) + n;
  return {
    total: wanted.length, effects, needHuman,
    // A saga run's status is read from its stream: only for the page asked for with `saga=1`.
    workflows: yes(saga) ? await Promise.all(page.map(async (w) => ({ ...w, ...(await sagaStatus(reads, w)) }))) : page,
    ...(nextCursor ? { nextCursor, cutShort: `${rest.length - limit} more match; the next page is ?cursor=${nextCursor} (same filters)` } : {}),
    window: `workflows with an open effect or one among the ${reads.effects.recentLimit.toLocaleString('en-US')} most recently active effects`,
  };
}

function position(w: WorkflowSummary): WorkflowListPosition {
  return { lastEventAt: Date.parse(w.lastEventAt), workflowId: w.workflowId, tenant: w.tenant };
}

/** A saga run's status and why, as its saga view says. */
async function sagaStatus(reads: Reads, w: WorkflowSummary): Promise<{ sagaStatus?: SagaView['status']; sagaWhy?: string }> {
  if (!w.saga) return {};
  const view = await reads.sagaRunner.view(w.tenant, w.workflowId);
  return { sagaStatus: view.status, ...(view.why ? { sagaWhy: view.why } : {}) };
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
    timeline: eventsFor(caller, recordedEvents).map((r) => ({ revision: r.revision, position: r.position, at: new Date(r.event.at).toISOString(), type: r.event.type, effectId: isEffectEvent(r.event) ? r.event.effectId : undefined, summary: describeEvent(r.event), event: r.event })),
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
  // `decidedBy` is what the caller said (a label, never verified): kept on the wire as it was, and said as a claim (`claimedBy`).
  return { step: d.step, tool: d.tool, args: d.args, decidedBy: d.decidedBy, ...(d.decidedBy !== undefined ? { claimedBy: d.decidedBy } : {}), ...(d.recordedBy ? { recordedBy: d.recordedBy } : {}), at: new Date(d.at).toISOString() };
}
