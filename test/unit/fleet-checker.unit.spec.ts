import { describe, expect, it } from 'vitest';
// @ts-expect-error the fleet harness is plain ESM JavaScript (test/fleet/*.mjs), run by node without a build
import { check } from '../fleet/checker.mjs';
// @ts-expect-error as above
import { schedule } from '../fleet/nemesis.mjs';

const op = (step: number, invoiceId: string, extra: Record<string, unknown> = {}) => ({ tenant: 't1', wf: 'wf-1', step, invoiceId, repeat: false, door: 'http', ...extra });
const invoke = (t: number, o: object) => ({ t, type: 'invoke', ...o });
const answer = (t: number, o: object, a: object) => ({ t, type: 'answer', ...o, ...a });
const charge = (id: string, invoiceId: string) => ({ id, metadata: { invoice_id: invoiceId } });
const run = (history: object[], charges: object[]) => check({ history, charges, ledger: { open: [], summary: {} }, faults: [], healAt: 0, endAt: 100 });

describe('the fleet checker can fail', () => {
  const s1 = op(1, 'INV-1');
  it('a clean history is valid', () => {
    const result = run([invoke(1, s1), answer(2, s1, { status: 'unknown', http: 503 }), invoke(3, s1), answer(4, s1, { status: 'done', http: 200, receipt: 'ch_1', effectId: 'e1' })], [charge('ch_1', 'INV-1')]);
    expect(result.anomalies).toEqual([]);
    expect(result.valid).toBe(true);
  });
  it('finds a duplicate effect', () => {
    const result = run([invoke(1, s1), answer(2, s1, { status: 'done', receipt: 'ch_1' })], [charge('ch_1', 'INV-1'), charge('ch_2', 'INV-1')]);
    expect(result.anomaliesByKind).toEqual({ 'duplicate-effect': 1 });
  });
  it('finds done without the provider, and a receipt of another invoice', () => {
    expect(run([answer(2, s1, { status: 'done', receipt: 'ch_9' })], []).anomaliesByKind).toEqual({ 'done-without-provider': 1 });
    expect(run([answer(2, s1, { status: 'done', receipt: 'ch_2' })], [charge('ch_2', 'INV-2')]).anomaliesByKind).toEqual({ 'receipt-mismatch': 1 });
  });
  it('finds not_done while the provider has the effect', () => {
    expect(run([answer(2, s1, { status: 'not_done' })], [charge('ch_1', 'INV-1')]).anomaliesByKind).toEqual({ 'not-done-with-provider': 1 });
  });
  it('finds an accepted command never final, and a false dedup of a declared repeat', () => {
    expect(run([invoke(1, s1), answer(2, s1, { status: 'unknown', http: 409, effectId: 'e1' })], []).anomaliesByKind).toEqual({ 'never-final': 1 });
    const s2 = op(2, 'INV-1', { repeat: true });
    expect(run([answer(2, s1, { status: 'done', receipt: 'ch_1' }), answer(3, s2, { status: 'done', receipt: 'ch_1' })], [charge('ch_1', 'INV-1')]).anomaliesByKind).toEqual({ 'false-dedup': 1 });
  });
});

describe('the nemesis schedule', () => {
  it('is a function of the seed, and fails over PostgreSQL once', () => {
    const a = schedule(7, { startMs: 0, endMs: 400_000 });
    expect(schedule(7, { startMs: 0, endMs: 400_000 })).toEqual(a);
    expect(schedule(8, { startMs: 0, endMs: 400_000 })).not.toEqual(a);
    expect(a.filter((f: { kind: string }) => f.kind === 'pg-failover')).toHaveLength(1);
  });
});

// ------------------------------------------------------------------ the ledger's side
// Ledger histories as effectd writes them (events of src/core/events.ts and saga-events.ts), in ledger order.
type Ev = Record<string, unknown> & { type: string };
const ledgerOf = (stream: string, events: Ev[]) => events.map((event, i) => ({ stream, position: i + 1, event: { v: 1, ...event } }));
const declared = (effectId: string, step: string, at = 0) => ({ type: 'EffectDeclared', at, effectId, workflowId: 'trip-1', step, slot: '0', principal: 'saga:trip-booking' });
const started = (effectId: string, at: number, instanceId: string, attempt = 1, leaseMs = 3_000) => ({ type: 'AttemptStarted', at, effectId, attempt, instanceId, leaseUntil: at + leaseMs });
const finished = (effectId: string, at: number, attempt = 1, outcome = 'committed') => ({ type: 'AttemptFinished', at, effectId, attempt, outcome, replayed: false, reason: 'HTTP 200', latencyMs: 1 });
const checkLedgerOf = (events: object[], extra: Record<string, unknown> = {}) => check({ history: [], charges: [], ledger: { open: [], summary: {}, events }, faults: [], healAt: 0, endAt: 100, ...extra });

/** A trip that completes: three compensable steps commit, then the email is sent. */
function healthyTrip(): Ev[] {
  const out: Ev[] = [{ type: 'SagaStarted', at: 0, saga: 'trip-booking', version: 1, tenant: 't1', workflowId: 'trip-1', input: {}, startedBy: 'agent-t1' }];
  let t = 1;
  for (const [id, step] of [['h', 'hold-flight'], ['b', 'book-hotel'], ['c', 'charge-card'], ['m', 'email-itinerary']]) out.push(declared(id, step, t++), started(id, t++, 'e1'), finished(id, t++));
  out.push({ type: 'SagaFinished', at: t, outcome: 'completed', reason: 'all 4 steps committed' });
  return out;
}
/** A trip whose email bounced: the three steps compensated in reverse order. */
function compensatedTrip(order = ['c', 'b', 'h']): Ev[] {
  const out = healthyTrip().filter((e) => e.type !== 'SagaFinished' && !(e.effectId === 'm' && e.type === 'AttemptFinished'));
  let t = 100;
  out.push(finished('m', t++, 1, 'failed_before_effect'), { type: 'SagaCompensating', at: t++, failedStep: 'email-itinerary', reason: '422' });
  const names: Record<string, string> = { h: 'hold-flight', b: 'book-hotel', c: 'charge-card' };
  for (const id of order) out.push(declared(`u${id}`, `compensate:${names[id]}`, t++), started(`u${id}`, t++, 'e2'), finished(`u${id}`, t++));
  out.push({ type: 'SagaFinished', at: t, outcome: 'compensated', reason: 'step email-itinerary failed' });
  return out;
}

describe('the fleet checker reads the ledger', () => {
  it('passes a healthy ledger: claims handed over after their lease, sagas in order, compensations in reverse', () => {
    const handover = ledgerOf('wf-2', [declared('x', '1'), started('x', 1_000, 'e1'), started('x', 4_000, 'e2', 2), finished('x', 4_100, 2)]);
    const result = checkLedgerOf([...ledgerOf('trip-1', healthyTrip()), ...handover, ...ledgerOf('trip-2', compensatedTrip()).map((r) => ({ ...r, stream: 'trip-2' }))]);
    expect(result.anomalies).toEqual([]);
    expect(result.ledgerChecked).toMatchObject({ sagas: 2, compensating: 1, claims: 2 + 4 + 4 + 3 });
  });
  it('finds two instances holding live claims on one effect at once', () => {
    // e2 claims at 2 000 while e1's lease runs to 4 000 and its attempt has not finished
    const result = checkLedgerOf(ledgerOf('wf-2', [declared('x', '1'), started('x', 1_000, 'e1'), started('x', 2_000, 'e2', 2), finished('x', 2_500, 2)]));
    expect(result.anomaliesByKind).toEqual({ 'two-live-claims': 1 });
    expect(result.anomalies[0]).toMatchObject({ effectId: 'x', overlapMs: 500 });
    // the same claims, e1's attempt finished before e2 claimed: valid
    expect(checkLedgerOf(ledgerOf('wf-2', [declared('x', '1'), started('x', 1_000, 'e1'), finished('x', 1_500, 1, 'unknown'), started('x', 2_000, 'e2', 2)])).valid).toBe(true);
  });
  it('finds an irreversible step dispatched while a compensable step was unsettled', () => {
    const events = healthyTrip();
    // the charge's commit recorded after the email's dispatch
    const charge = events.findIndex((e) => e.effectId === 'c' && e.type === 'AttemptFinished');
    const [commit] = events.splice(charge, 1);
    events.splice(events.findIndex((e) => e.effectId === 'm' && e.type === 'AttemptStarted') + 1, 0, commit!);
    const result = checkLedgerOf(ledgerOf('trip-1', events));
    expect(result.anomaliesByKind).toEqual({ 'saga-order': 1 });
    expect(result.anomalies[0]).toMatchObject({ unsettled: 'charge-card', irreversible: 'email-itinerary', by: 'ledger' });
  });
  it('finds by the providers\' clocks an email sent before the charge existed', () => {
    const oracle = { charges: [{ id: 'ch_1', metadata: { invoice_id: 'TRIP-trip-1' }, createdAtMs: 5_000 }], sagaOracles: { email: { emails: [{ id: 'em_1', to: ['ok.trip-1@example.com'], createdAtMs: 4_000 }] } } };
    expect(checkLedgerOf(ledgerOf('trip-1', healthyTrip()), oracle).anomaliesByKind).toEqual({ 'saga-order': 1 });
    expect(checkLedgerOf(ledgerOf('trip-1', healthyTrip()), { ...oracle, sagaOracles: { email: { emails: [{ to: ['ok.trip-1@example.com'], createdAtMs: 6_000 }] } } }).valid).toBe(true);
  });
  it('finds compensations out of reverse order', () => {
    const result = checkLedgerOf(ledgerOf('trip-1', compensatedTrip(['b', 'c', 'h'])));
    expect(result.anomaliesByKind).toEqual({ 'compensation-order': 1 });
    expect(result.anomalies[0]).toMatchObject({ sent: 'compensate:book-hotel', before: 'compensate:charge-card' });
  });
  it('finds a compensated saga whose charge was never refunded', () => {
    const s = { tenant: 't1', wf: 'trip-1', step: 'saga', kind: 'saga', saga: 'trip-booking', invoiceId: 'TRIP-trip-1', door: 'http' };
    const history = [invoke(1, s), answer(2, s, { status: 'not_done', http: 201, sagaStatus: 'compensated' })];
    const charges = [{ id: 'ch_1', metadata: { invoice_id: 'TRIP-trip-1' } }];
    const base = { history, charges, faults: [], healAt: 0, endAt: 100, ledger: { open: [], summary: {}, events: [] } };
    expect(check({ ...base, refunds: [] }).anomaliesByKind).toEqual({ 'saga-uncompensated': 1 });
    expect(check({ ...base, refunds: [{ id: 're_1', charge: 'ch_1' }] }).valid).toBe(true);
  });
  it('takes a step retried after not_done as the same intent: two charges are a duplicate', () => {
    const s2 = op(11, 'INV-1', { retryOf: 1 });
    const history = [answer(2, s1of(), { status: 'not_done' }), answer(3, s2, { status: 'done', receipt: 'ch_2' })];
    expect(run(history, [charge('ch_2', 'INV-1')]).valid).toBe(true);
    expect(run(history, [charge('ch_1', 'INV-1'), charge('ch_2', 'INV-1')]).anomaliesByKind).toEqual({ 'duplicate-effect': 1, 'not-done-with-provider': 1 });
  });
});
function s1of() {
  return op(1, 'INV-1');
}
