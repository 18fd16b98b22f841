import type { AgentOutcome } from '../../core/agent-outcome.js';
import { OPEN_STATUSES } from '../../core/effect-lifecycle.js';
import { effectStatus, needsHuman, unhandledDuplicates, type EffectState } from '../../core/effect-state.js';
import { workflowStream } from '../../core/streams.js';
import { canSeeTenant, tenantOf, type Caller } from '../caller.js';
import { effectListQuery } from '../inputs.js';
import { visibleEffect, type Reads } from '../reads.js';
import { compareForList, decodeEffectCursor, encodeEffectCursor, isAfter } from './effect-list-cursor.js';
import { listQuery } from './list-cursors.js';
import { describeEvent, eventsFor } from './timeline.js';

/** States only an unsettled effect is in: lists of them are complete (from the open view), not just recent. */
const OPEN: ReadonlySet<string> = OPEN_STATUSES;

/** One effect, its state, outcome and every event about it (the evidence). */
export async function effectDetail(reads: Reads, caller: Caller, effectId: string) {
  return detailOf(reads, await visibleEffect(reads, caller, effectId), caller);
}

/** The effect with its whole history: every intent, attempt, check, escalation and resolution, in order (provider keys abridged for an agent: eventsFor). */
export async function detailOf(reads: Reads, effect: EffectState, caller: Pick<Caller, 'role'> = { role: 'operator' }) {
  const matched = effect.heldBy ? await heldAgainst(reads, effect) : undefined;
  const log = eventsFor(caller, effect.log.map((event) => ({ event }))).map((r) => r.event);
  return { ...effectView(reads, effect, matched), args: effect.declared.args, evidence: log.map((e) => ({ at: new Date(e.at).toISOString(), type: e.type, summary: describeEvent(e) })) };
}

/**
 * Effects by state, newest first. States an unsettled effect is in (`attention` = escalated +
 * terminal_failure, the operator queue) are listed completely; others come from the recent window.
 */
export async function effectList(reads: Reads, caller: Caller, query: unknown) {
  await reads.effects.fresh();
  const { data, after } = listQuery(effectListQuery, query, (cursor) => decodeEffectCursor(reads.cursors, cursor));
  const { state, tenant, limit, q } = data;
  if (tenant !== undefined) tenantOf(caller, tenant);
  const attention = state === 'attention';
  const wanted = state && !attention ? new Set(state.split(',')) : undefined;
  // What needs a human is always open (a detected duplicate stays open until it is dealt with).
  const complete = attention || (wanted !== undefined && [...wanted].every((s) => OPEN.has(s)));
  const now = reads.now();
  const needle = q?.toLowerCase();
  const matching = [...(complete ? reads.effects.open() : needle ? openAndRecent(reads) : reads.effects.recent())]
    .filter((e) => canSeeTenant(caller, e.declared.tenant) && (!tenant || e.declared.tenant === tenant))
    .filter((e) => !needle || matchesSearch(e, needle))
    .filter((e) => (attention ? needsHuman(e, now, reads.shell.stillLooking(e, now)) : !wanted || wanted.has(effectStatus(e, now))))
    .filter((e) => !after || isAfter(e, after))
    .sort(compareForList);
  const page = matching.slice(0, limit);
  const nextCursor = matching.length > limit ? encodeEffectCursor(reads.cursors, page[page.length - 1]!) : undefined;
  return {
    effects: page.map((e) => effectView(reads, e)),
    ...(nextCursor ? { nextCursor, cutShort: `${matching.length - limit} more match; the next page is ?cursor=${nextCursor} (same state, tenant and q), or narrow by state or tenant` } : {}),
    ...(complete ? {} : { window: `the ${reads.effects.recentLimit.toLocaleString('en-US')} most recently active effects; older ones are found by id (GET /v1/effects/:id) or by workflow` }),
  };
}

/** Every open effect and the recent window, once each: where a search looks. */
export function openAndRecent(reads: Pick<Reads, 'effects'>): EffectState[] {
  const byId = new Map<string, EffectState>();
  for (const e of reads.effects.recent()) byId.set(e.effectId, e);
  for (const e of reads.effects.open()) byId.set(e.effectId, e);
  return [...byId.values()];
}

/** `q`: the effect id (its reference), workflow id, tool, target or receipt contains the (lower-cased) text. */
export function matchesSearch(effect: EffectState, needle: string): boolean {
  const { workflowId, tool, target } = effect.declared;
  return [effect.effectId, workflowId, tool, target, effect.receipt ?? ''].some((field) => field.toLowerCase().includes(needle));
}

/** An effect's outcome read back, as the shell answers it (a held one with the state of what it was held against). */
export function recorded(reads: Pick<Reads, 'shell'>, effect: EffectState, find: (effectId: string) => EffectState | undefined): AgentOutcome {
  const matched = effect.heldBy ? find(effect.heldBy.effectId) : undefined;
  return reads.shell.answer(effect, true, matched);
}

/** An effect as operators list it: its outcome and where it sits. */
function effectView(reads: Reads, effect: EffectState, matched?: EffectState) {
  const { tenant, workflowId, step, slot, principal, onBehalfOf } = effect.declared;
  const held = matched ?? (effect.heldBy ? reads.effects.known(effect.heldBy.effectId) : undefined);
  return {
    ...recorded(reads, effect, () => held),
    tenant, workflowId, step, slot, declaredBy: principal, ...(onBehalfOf ? { onBehalfOf } : {}), attempts: effect.attempts.length,
    ...(effect.unknownSince !== undefined ? { unknownSince: new Date(effect.unknownSince).toISOString() } : {}),
    ...(effect.resolvedBy ? { resolvedBy: effect.resolvedBy } : {}),
    ...(effect.audit?.verdict === 'duplicates' || effect.lateArrival ? { duplicates: duplicatesView(effect, reads.shell.tool(effect.declared.tool)?.spec.undo?.tool) } : {}),
    ...(effect.lateArrival ? { lateArrival: { receipt: effect.lateArrival.receipt, provenAbsentAt: new Date(effect.lateArrival.provenAbsentAt).toISOString(), detectedAt: new Date(effect.lateArrival.at).toISOString() } } : {}),
  };
}

/** The effect a held one was held against, read now. */
async function heldAgainst(reads: Reads, effect: EffectState): Promise<EffectState | undefined> {
  const by = effect.heldBy!;
  return (await reads.shell.read(workflowStream(effect.declared.tenant, by.workflowId ?? effect.declared.workflowId))).effects.get(by.effectId);
}

/** A detected duplicate as operators see it: every object, which ones still need a decision, and the undo on offer. */
function duplicatesView(effect: EffectState, undoTool: string | undefined) {
  const undo = undoTool ? { undoTool } : {};
  const late = effect.lateArrival;
  if (late) {
    // A late arrival: this effect's own object appeared after the agent was told not_done; another step may have done it again.
    return { receipts: [late.receipt], unhandled: unhandledDuplicates(effect), handled: late.handled ? { [late.receipt]: late.handled } : {}, detectedAt: new Date(late.at).toISOString(), ...undo };
  }
  const audit = effect.audit as Extract<EffectState['audit'], { verdict: 'duplicates' }>;
  return { receipts: audit.receipts, own: effect.receipt, unhandled: unhandledDuplicates(effect), handled: audit.handled, detectedAt: new Date(audit.at).toISOString(), ...undo };
}
