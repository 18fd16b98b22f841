// The checker's ledger-side anomalies, from every event of the ledger (read after the run from the
// PostgreSQL that takes writes) and the providers' oracles as ground truth where they have times:
//   two-live-claims     two instances both holding a live claim on one effect at one moment
//   saga-order          a saga's irreversible step dispatched while one of its compensable steps was
//                       not settled as committed (the ledger's order; the provider's times)
//   compensation-order  a failed saga's compensations not in reverse order of its committed steps
//   saga-uncompensated  a saga answered compensated whose charge the payments provider never refunded

/** The built-in sagas' steps (sagas/*.saga.ts), in order, with their reversibility. */
export const SAGA_STEPS = {
  'trip-booking': [['hold-flight', 'compensable'], ['book-hotel', 'compensable'], ['charge-card', 'compensable'], ['email-itinerary', 'irreversible']],
  'subscription-renewal': [['charge', 'compensable'], ['email-receipt', 'irreversible']],
};
const COMPENSATE = 'compensate:';

/** Events that settle an effect as committed: a reply, a lookup, a human, a late arrival. */
function committedBy(e) {
  return (e.type === 'AttemptFinished' && e.outcome === 'committed')
    || (e.type === 'ReconciliationChecked' && e.verdict === 'committed')
    || (e.type === 'EffectResolved' && e.outcome === 'committed')
    || e.type === 'LateArrivalDetected';
}

/** Each effect's events in ledger order, with its declaration. */
function effectsOf(events) {
  const effects = new Map();
  for (const r of events) {
    const e = r.event;
    if (!e?.effectId) continue;
    if (!effects.has(e.effectId)) effects.set(e.effectId, { effectId: e.effectId, stream: r.stream, declared: undefined, events: [] });
    const x = effects.get(e.effectId);
    if (e.type === 'EffectDeclared') x.declared = e;
    x.events.push({ ...r, event: e });
  }
  return effects;
}

/** A claim is live from its AttemptStarted until its lease ends or its attempt finishes, whichever is first. */
export function twoLiveClaims(effects) {
  const out = [];
  for (const x of effects.values()) {
    const finishedAt = new Map();
    for (const { event: e } of x.events) if (e.type === 'AttemptFinished' && !finishedAt.has(e.attempt)) finishedAt.set(e.attempt, e.at);
    const claims = x.events.filter(({ event: e }) => e.type === 'AttemptStarted').map(({ event: e, position }) => ({
      attempt: e.attempt, instanceId: e.instanceId, from: e.at, until: Math.min(e.leaseUntil, finishedAt.get(e.attempt) ?? Infinity), position,
    }));
    for (let i = 0; i < claims.length; i++) {
      for (let j = i + 1; j < claims.length; j++) {
        const [a, b] = [claims[i], claims[j]];
        if (a.instanceId === b.instanceId) continue;
        if (a.from < b.until && b.from < a.until) {
          out.push({ kind: 'two-live-claims', effectId: x.effectId, workflowId: x.declared?.workflowId, claims: [a, b].map((c) => `attempt ${c.attempt} by ${c.instanceId} live ${c.from}–${c.until}`), overlapMs: Math.min(a.until, b.until) - Math.max(a.from, b.from) });
        }
      }
    }
  }
  return out;
}

/** Per saga workflow: its steps' effects (by step name) and its compensations, from the ledger. */
function sagasOf(events, effects) {
  const sagas = new Map();
  for (const r of events) {
    if (r.event?.type === 'SagaStarted') sagas.set(r.stream, { stream: r.stream, saga: r.event.saga, workflowId: r.event.workflowId, startedAt: r.event.at, steps: new Map(), compensations: new Map(), compensating: undefined, finished: undefined });
  }
  for (const r of events) {
    const s = sagas.get(r.stream);
    if (!s) continue;
    if (r.event.type === 'SagaCompensating') s.compensating ??= { ...r.event, position: r.position };
    if (r.event.type === 'SagaFinished') s.finished = { ...r.event, position: r.position };
  }
  for (const x of effects.values()) {
    const s = sagas.get(x.stream);
    if (!s || !x.declared) continue;
    const step = String(x.declared.step);
    const into = step.startsWith(COMPENSATE) ? s.compensations : s.steps;
    const name = step.startsWith(COMPENSATE) ? step.slice(COMPENSATE.length) : step;
    if (!into.has(name)) into.set(name, []);
    into.get(name).push(x);
  }
  return [...sagas.values()];
}

const firstDispatch = (x) => x.events.find(({ event: e }) => e.type === 'AttemptStarted');
const committedAt = (x) => x.events.find(({ event: e }) => committedBy(e));

/**
 * The irreversible step's first dispatch must come after every compensable step settled as
 * committed, in the ledger's order (one stream: positions order it) and by the providers' clocks
 * (`providerTimes`: step name → createdAtMs at the provider, when known).
 */
export function sagaOrder(sagas, providerTimes = () => ({})) {
  const out = [];
  for (const s of sagas) {
    const def = SAGA_STEPS[s.saga];
    if (!def) continue;
    const times = providerTimes(s);
    for (const [irreversible] of def.filter(([, r]) => r === 'irreversible')) {
      for (const x of s.steps.get(irreversible) ?? []) {
        const sent = firstDispatch(x);
        if (!sent) continue;
        for (const [name] of def.filter(([, r]) => r === 'compensable')) {
          const settled = (s.steps.get(name) ?? []).map(committedAt).find(Boolean);
          if (!settled || settled.position > sent.position) {
            out.push({ kind: 'saga-order', workflowId: s.workflowId, saga: s.saga, irreversible, dispatchedAt: sent.event.at, unsettled: name, settledAt: settled?.event.at ?? null, by: 'ledger' });
          } else if (times[irreversible] !== undefined && times[name] !== undefined && times[irreversible] < times[name]) {
            out.push({ kind: 'saga-order', workflowId: s.workflowId, saga: s.saga, irreversible, providerAt: times[irreversible], unsettled: name, providerSettledAt: times[name], by: 'provider' });
          }
        }
      }
    }
  }
  return out;
}

/** When a saga compensates: each committed step's compensation settles before the one of the step before it is sent. */
export function compensationOrder(sagas) {
  const out = [];
  for (const s of sagas) {
    const def = SAGA_STEPS[s.saga];
    if (!def || !s.compensating) continue;
    const committed = def.map(([name]) => name).filter((name) => (s.steps.get(name) ?? []).some(committedAt) && s.compensations.has(name));
    for (let i = committed.length - 1; i > 0; i--) {
      const later = s.compensations.get(committed[i]).map(committedAt).find(Boolean);
      const earlier = s.compensations.get(committed[i - 1]).map(firstDispatch).filter(Boolean).sort((a, b) => a.position - b.position)[0];
      if (!earlier) continue;
      if (!later || later.position > earlier.position) {
        out.push({ kind: 'compensation-order', workflowId: s.workflowId, saga: s.saga, sent: `compensate:${committed[i - 1]}`, at: earlier.event.at, before: `compensate:${committed[i]}`, settledAt: later?.event.at ?? null });
      }
    }
  }
  return out;
}

/**
 * The ledger-side anomalies. `ledgerEvents`: [{stream, position, event}] in ledger order;
 * `emails` / `charges` / `refunds`: the oracles (ground truth with the providers' times).
 */
export function checkLedger({ ledgerEvents, charges = [], refunds = [], emails = [], compensatedSagas = [] }) {
  const effects = effectsOf(ledgerEvents);
  const sagas = sagasOf(ledgerEvents, effects);
  const chargeAt = new Map(charges.map((c) => [c.metadata?.invoice_id, c.createdAtMs ?? (c.created ?? 0) * 1000]));
  const emailAt = (wf) => emails.filter((m) => [].concat(m.to).some((to) => String(to).endsWith(`.${wf}@example.com`))).map((m) => m.createdAtMs ?? Date.parse(m.created_at)).sort((a, b) => a - b)[0];
  const providerTimes = (s) => (s.saga === 'trip-booking' ? { 'email-itinerary': emailAt(s.workflowId), 'charge-card': chargeAt.get(`TRIP-${s.workflowId}`) } : {});
  const anomalies = [...twoLiveClaims(effects), ...sagaOrder(sagas, providerTimes), ...compensationOrder(sagas)];
  const refunded = new Set(refunds.map((r) => r.charge));
  for (const wf of compensatedSagas) {
    const charge = charges.find((c) => c.metadata?.invoice_id === `TRIP-${wf}`);
    if (charge && !refunded.has(charge.id)) anomalies.push({ kind: 'saga-uncompensated', workflowId: wf, charge: charge.id });
  }
  return {
    anomalies,
    summary: { events: ledgerEvents.length, effects: effects.size, claims: [...effects.values()].reduce((n, x) => n + x.events.filter((r) => r.event.type === 'AttemptStarted').length, 0), sagas: sagas.length, compensating: sagas.filter((s) => s.compensating).length },
  };
}
