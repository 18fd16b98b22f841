import { describe, expect, it } from 'vitest';
import { sagaTargets } from '../../packages/bench/src/cell-runner.js';
import { sagaTruth, type Oracles } from '../../packages/bench/src/ground-truth.js';
import { FAULT_SPECS, faultApplies } from '../../packages/bench/src/faults.js';
import { planCells, REDECIDE_QUICK_FAULTS } from '../../packages/bench/src/matrix.js';
import { FAULTS } from '../../packages/bench/src/names.js';
import { failAtValues } from '../../packages/bench/src/saga-plans.js';
import { scoreSaga } from '../../packages/bench/src/scoring.js';
import { DEFAULT_WORKLOADS, workload } from '../../packages/bench/src/workloads.js';

const trip = workload('trip-booking')!.saga!;
const hold = (id: string, releasedAtMs: number | null) => ({ id, metadata: {}, flight: 'TP1234', passenger: 'Ana', date: '2027-03-14', releasedAtMs });
const booking = (id: string, cancelledAtMs: number | null) => ({ id, metadata: {}, hotel: 'Hotel Lisboa', guest: 'Ana', checkIn: '2027-03-14', cancelledAtMs });
const charge = (id: string, refunded: boolean) => ({ id, metadata: { invoice_id: 'TRIP-t' }, amount: 64000, amount_refunded: refunded ? 64000 : 0 });
const email = { id: 'em_1', to: ['ana.t@example.com'], headers: { 'X-Template': 'itinerary' } };
const world = (parts: { holds?: unknown[]; bookings?: unknown[]; releases?: unknown[]; cancellations?: unknown[]; charges?: unknown[]; refunds?: unknown[]; refundRefusals?: unknown[]; emails?: unknown[] }): Oracles => ({
  travel: { holds: parts.holds ?? [], bookings: parts.bookings ?? [], releases: parts.releases ?? [], cancellations: parts.cancellations ?? [] },
  payments: { charges: parts.charges ?? [], refunds: parts.refunds ?? [], refundRefusals: parts.refundRefusals ?? [] },
  email: { emails: parts.emails ?? [] },
});
const truth = (oracles: Oracles, failed: boolean, withHuman: string[] = []) => sagaTruth('TRIP-t', { to: 'ana.t@example.com', template: 'itinerary' }, failed, oracles, withHuman);

describe('the saga checks read only the oracles', () => {
  it('a completed trip: nothing to report', () => {
    expect(truth(world({ holds: [hold('fh_1', null)], bookings: [booking('hb_1', null)], charges: [charge('ch_1', false)], emails: [email] }), false))
      .toEqual({ emailWithoutCharge: 0, leftInPlace: 0, leftWithHuman: 0, compensatedTwice: 0, phantomCompensations: 0 });
  });

  it('an itinerary email with the charge refunded, or with no charge at all, is an email without a settled charge', () => {
    expect(truth(world({ charges: [charge('ch_1', true)], refunds: [{ id: 're_1', charge: 'ch_1' }], emails: [email] }), true).emailWithoutCharge).toBe(1);
    expect(truth(world({ emails: [email] }), true).emailWithoutCharge).toBe(1);
  });

  it('after a failed saga, every hold, booking or charge not undone is left in place — unless the system handed its undo to a human', () => {
    const oracles = world({ holds: [hold('fh_1', null)], bookings: [booking('hb_1', 5)], charges: [charge('ch_1', false)] });
    expect(truth(oracles, true)).toMatchObject({ leftInPlace: 2, leftWithHuman: 0 });
    expect(truth(oracles, true, ['ch_1'])).toMatchObject({ leftInPlace: 1, leftWithHuman: 1 });
    // A saga that did not fail leaves its effects in place on purpose.
    expect(truth(oracles, false).leftInPlace).toBe(0);
  });

  it('a second applied undo of one record, or a second refund of one charge, is a compensation applied twice; refused repeats are not', () => {
    const releases = [{ id: 'rel_1', hold: 'fh_1', applied: true, reason: null }, { id: 'rel_2', hold: 'fh_1', applied: false, reason: 'already_released' }];
    expect(truth(world({ holds: [hold('fh_1', 3)], releases }), true).compensatedTwice).toBe(0);
    expect(truth(world({ holds: [hold('fh_1', 3)], releases: [...releases, { id: 'rel_3', hold: 'fh_1', applied: true, reason: null }] }), true).compensatedTwice).toBe(1);
    expect(truth(world({ charges: [charge('ch_1', true)], refunds: [{ id: 're_1', charge: 'ch_1' }, { id: 're_2', charge: 'ch_1' }] }), true).compensatedTwice).toBe(1);
  });

  it('an undo of a record that does not exist is the compensation of a step that did not happen', () => {
    expect(truth(world({ cancellations: [{ id: 'cxl_1', booking: 'hb_9', applied: false, reason: 'resource_missing' }] }), true).phantomCompensations).toBe(1);
    expect(truth(world({ refundRefusals: [{ charge: 'ch_9', code: 'resource_missing' }] }), true).phantomCompensations).toBe(1);
  });
});

/** The faults that mean something for a workload (retention-shorter-than-declared, say, only for keyed charges). */
const faultsOf = (name: string) => FAULTS.filter((f) => faultApplies(FAULT_SPECS[f], workload(name)!));

describe('saga cells', () => {
  it('score: a step said done with no record is missing, a second record is a duplicate, an open step or undo is unresolved', () => {
    expect(scoreSaga([
      { final: 'done', receipt: 'fh_1', present: 1, knownReceipts: ['fh_1'] },
      { final: 'done', receipt: 'hb_1', present: 0, knownReceipts: [] },
      { final: 'not_done', present: 2, knownReceipts: ['ch_1', 'ch_2'] },
      { final: 'unknown', present: 0, knownReceipts: [] },
    ], ['escalated', 'done'])).toEqual({ declared: 4, duplicates: 1, missing: 1, falseDedup: 0, unresolved: 2, wrongReceipt: 0 });
  });

  it('the fault hits a step before the refused one or its undo; a saga refused at its first step is hit there', () => {
    const ids = (failAt: string) => sagaTargets(trip, 't', failAt).candidates.map((i) => i.id);
    expect(ids('none')).toEqual(['hold-flight', 'book-hotel', 'charge-card', 'email-itinerary']);
    expect(ids('hold-flight')).toEqual(['hold-flight']);
    expect(ids('charge-card')).toEqual(['hold-flight', 'book-hotel', 'compensate:book-hotel', 'compensate:hold-flight']);
    expect(sagaTargets(trip, 't', 'email-itinerary').sequence.map((i) => i.id)).toEqual(['hold-flight', 'book-hotel', 'charge-card', 'email-itinerary', 'compensate:charge-card', 'compensate:book-hotel', 'compensate:hold-flight']);
  });

  it('--quick samples one failAt per fault yet covers every step of each saga; the full matrix runs every combination', () => {
    const quick = planCells({ workloads: [...DEFAULT_WORKLOADS], faults: [...FAULTS], policies: ['effectd', 'effectd+redecide'], seeds: [1], failAt: 'sample', redecideFaults: REDECIDE_QUICK_FAULTS });
    for (const name of ['trip-booking', 'subscription-renewal']) {
      const cells = quick.filter((c) => c.workload === name && c.policy === 'effectd');
      expect(cells).toHaveLength(faultsOf(name).length);
      expect(new Set(cells.map((c) => c.failAt))).toEqual(new Set(failAtValues(workload(name)!.saga!)));
    }
    // The re-deciding model runs on every workload but the sagas, under the chosen faults only.
    const redecide = quick.filter((c) => c.policy === 'effectd+redecide');
    expect(new Set(redecide.map((c) => c.fault))).toEqual(new Set(REDECIDE_QUICK_FAULTS));
    expect(new Set(redecide.map((c) => c.workload))).toEqual(new Set(DEFAULT_WORKLOADS.filter((w) => !workload(w)!.saga)));
    const full = planCells({ workloads: ['trip-booking'], faults: [...FAULTS], policies: ['effectd'], seeds: [1, 2], failAt: 'all' });
    expect(full).toHaveLength(2 * faultsOf('trip-booking').length * 5);
  });
});
