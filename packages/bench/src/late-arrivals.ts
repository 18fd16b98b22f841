import { IN_PROGRESS_STATUSES } from '../../../src/core/effect-lifecycle.js';
import { sleep } from './bench-http.js';
import type { ProviderRecord } from './ground-truth.js';
import type { LateDelivery } from './provider-proxy.js';

/**
 * Late arrivals (the late-delivery fault): a request that reached the provider after the tool's
 * settle window and committed there. What the fault injected is read from the proxy that held it
 * (its reply status) and the providers' records; what the system detected is read from effectd's
 * own account of the effect whose reference the request carried (GET /v1/effects/:id) — never from
 * what the agent was told.
 */

/** effectd's view of one effect (GET /v1/effects/:id), as far as late arrivals go. */
export interface LateEffectView {
  effectId: string;
  step?: string;
  state?: string;
  receipt?: string;
  lateArrival?: { receipt: string };
  duplicates?: { unhandled?: string[]; undoTool?: string };
}

export interface LateArrivalScore {
  /** Late requests the provider committed (a 2xx answer to the delivery). */
  injected: number;
  /** Of those, the ones the system itself accounts for: recorded as a late arrival, or found by its lookup before it ever answered not_done. */
  detected: number;
  undetected: number;
  /** Per business identity (the cell's JSON key), detected late arrivals queued for an operator: not duplicates (scoring.ts, `lateQueued`). */
  queuedByIdentity: Map<string, number>;
  notes: string[];
}

/** effectd's effect ids as the stamped reference carries them (src/core/identity.ts: the reference is the effect id). */
const EFFECT_ID = /eff_[0-9a-f]{16,}/;

/** The effect a request belongs to, by the reference effectd stamped into it (none: a baseline's request, which stamps nothing). */
export function referenceIn(body: string): string | undefined {
  return EFFECT_ID.exec(body)?.[0];
}

const committed = (d: LateDelivery) => d.status !== undefined && d.status >= 200 && d.status < 300;

/**
 * Judges each late delivery that committed: detected when the effect named by its reference is
 * `committed` with a receipt naming one of the cell's provider records — as a late arrival
 * (LateArrivalDetected: queued for an operator, with the undo its contract names), or found by a
 * lookup before any proof of absence (effectd never said not_done). Anything else is undetected:
 * an object at the provider the system does not know about. Pure.
 */
export function judgeLateArrivals(
  deliveries: readonly LateDelivery[],
  effects: ReadonlyMap<string, LateEffectView>,
  /** The cell's provider records by business identity. */
  records: ReadonlyMap<string, readonly ProviderRecord[]>,
  /** Effects a lookup proved absent at some point (a `not_committed` check in their history). */
  provenAbsent: ReadonlySet<string>,
): LateArrivalScore {
  const identityOf = (receipt: string | undefined) => {
    if (receipt === undefined) return undefined;
    for (const [identity, list] of records) if (list.some((r) => r.id === receipt || (r.receipts !== 'none' && r.receipts.includes(receipt)))) return identity;
    return undefined;
  };
  const score: LateArrivalScore = { injected: 0, detected: 0, undetected: 0, queuedByIdentity: new Map(), notes: [] };
  for (const delivery of deliveries.filter(committed)) {
    score.injected += 1;
    const late = `a request that reached the provider ${delivery.deliveredAt - delivery.receivedAt} ms after it was sent (${delivery.method} ${delivery.path}, HTTP ${delivery.status})`;
    const ref = referenceIn(delivery.body);
    const effect = ref ? effects.get(ref) : undefined;
    const name = effect?.step ?? ref;
    const arrived = effect?.lateArrival ? identityOf(effect.lateArrival.receipt) : undefined;
    if (effect?.lateArrival && arrived !== undefined) {
      score.detected += 1;
      score.queuedByIdentity.set(arrived, (score.queuedByIdentity.get(arrived) ?? 0) + 1);
      const undo = effect.duplicates?.undoTool;
      score.notes.push(`${name}: late arrival detected: ${late} after effectd had proven it absent; effectd found it (receipt ${effect.lateArrival.receipt}), recorded LateArrivalDetected and queued it for an operator${undo ? ` with ${undo} on offer` : ' (the tool declares no undo)'}`);
      continue;
    }
    if (effect && ref && effect.state === 'committed' && !provenAbsent.has(ref) && identityOf(effect.receipt) !== undefined) {
      score.detected += 1;
      score.notes.push(`${name}: ${late}; effectd's lookup found it (receipt ${effect.receipt}) before it ever answered not_done: nothing to queue`);
      continue;
    }
    score.undetected += 1;
    score.notes.push(`${name ?? 'a request'}: late arrival NOT detected: ${late}; ${!ref ? 'it carries no reference of effectd\'s (the caller gave up on it and never learns it happened)' : !effect ? `effectd's effect ${ref} could not be read` : `effectd says ${effect.state}${effect.receipt ? ` (receipt ${effect.receipt})` : ''}`}`);
  }
  return score;
}

/** effectd itself still moves it (the lifecycle table's inProgress); settled for good or with a human, waiting longer changes nothing. */
function stillMoving(state: string | undefined): boolean {
  return state === undefined || (IN_PROGRESS_STATUSES as ReadonlySet<string>).has(state);
}

interface TimelineEntry {
  type: string;
  effectId?: string;
  event?: { verdict?: string };
}


/**
 * What effectd says about the effects late requests belong to, after its absence audits had time to
 * run: waits at most `waitMs` while an effect of the workflow was proven absent and not audited yet
 * (no AbsenceAudited or LateArrivalDetected), or an effect a late request names is still open, then
 * reads those effects. `get` answers a GET on effectd's API (undefined: no 200).
 */
export async function readLateArrivals(
  get: (path: string) => Promise<unknown>,
  workflowId: string,
  deliveries: readonly LateDelivery[],
  waitMs: number,
): Promise<{ effects: Map<string, LateEffectView>; provenAbsent: Set<string>; notes: string[] }> {
  const until = Date.now() + waitMs;
  const refs = [...new Set(deliveries.filter(committed).map((d) => referenceIn(d.body)).filter((r): r is string => r !== undefined))];
  for (;;) {
    const workflow = (await get(`/v1/workflows/${encodeURIComponent(workflowId)}`)) as { effects?: { effectId: string; state?: string }[]; timeline?: TimelineEntry[] } | undefined;
    const timeline = workflow?.timeline ?? [];
    const provenAbsent = new Set(timeline.filter((t) => t.type === 'ReconciliationChecked' && t.event?.verdict === 'not_committed').map((t) => t.effectId!));
    const audited = new Set(timeline.filter((t) => t.type === 'AbsenceAudited' || t.type === 'LateArrivalDetected').map((t) => t.effectId));
    const open = new Set((workflow?.effects ?? []).filter((e) => refs.includes(e.effectId) && stillMoving(e.state)).map((e) => e.effectId));
    const due = [...provenAbsent].filter((id) => !audited.has(id)).concat([...open].filter((id) => !provenAbsent.has(id)));
    if ((!workflow || due.length > 0) && Date.now() < until) {
      await sleep(100);
      continue;
    }
    const notes = !workflow
      ? [`effectd's late arrivals could not be read: GET /v1/workflows/${workflowId} did not answer 200`]
      : due.map((id) => `${id}: proven absent or still open, and not yet audited by effectd when the benchmark stopped waiting (${waitMs} ms)`);
    const effects = new Map<string, LateEffectView>();
    for (const ref of refs) {
      const view = (await get(`/v1/effects/${encodeURIComponent(ref)}`)) as LateEffectView | undefined;
      if (view) effects.set(ref, view);
    }
    return { effects, provenAbsent, notes };
  }
}
