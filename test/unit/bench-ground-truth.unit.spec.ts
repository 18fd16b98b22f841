import { describe, expect, it } from 'vitest';
import { chooseTarget } from '../../packages/bench/src/faults.js';
import { recordsOf } from '../../packages/bench/src/ground-truth.js';
import { Rng } from '../../packages/bench/src/rng.js';
import { DEFAULT_WORKLOADS, workload } from '../../packages/bench/src/workloads.js';

describe('benchmark ground truth: provider records by business identity (pure)', () => {
  it('charges are matched by invoice id, whatever key they were created under', () => {
    const payments = { charges: [
      { id: 'ch_1', metadata: { invoice_id: 'INV-a' }, idempotencyKey: 'k1' },
      { id: 'ch_2', metadata: { invoice_id: 'INV-a' }, idempotencyKey: 'k2' },
      { id: 'ch_3', metadata: { invoice_id: 'INV-b' }, idempotencyKey: 'k1' },
    ] };
    expect(recordsOf({ kind: 'charge', invoiceId: 'INV-a' }, { payments })).toEqual([{ id: 'ch_1', receipts: ['ch_1'] }, { id: 'ch_2', receipts: ['ch_2'] }]);
  });

  it('emails are matched by recipient (any case) and template, so a reworded subject is still the same email', () => {
    const email = { emails: [
      { id: 'em_1', to: ['Guest1@Example.com'], subject: 'Your itinerary', headers: { 'X-Template': 'itinerary' } },
      { id: 'em_2', to: ['guest1@example.com'], subject: 'Your Lisbon trip itinerary', headers: { 'X-Template': 'itinerary' } },
      { id: 'em_3', to: ['guest1@example.com'], subject: 'Receipt', headers: { 'X-Template': 'payment-receipt' } },
    ] };
    expect(recordsOf({ kind: 'email', to: 'guest1@example.com', template: 'itinerary' }, { email }).map((r) => r.id)).toEqual(['em_1', 'em_2']);
  });

  it('instances are matched by name and terminated ones do not count', () => {
    const cloud = { instances: [
      { instanceId: 'i-1', name: 'web-a', terminatedAtMs: null },
      { instanceId: 'i-2', name: 'web-a', terminatedAtMs: 5 },
      { instanceId: 'i-3', name: 'web-b', terminatedAtMs: null },
    ] };
    expect(recordsOf({ kind: 'instance', name: 'web-a' }, { cloud })).toEqual([{ id: 'i-1', receipts: ['i-1'] }]);
  });

  it('journal lines are matched by the order they name, rephrased or not, and answer to file:line and stamped references', () => {
    const weak = { lines: [
      { file: 'shipments.log', lineNumber: 1, line: 'ORD-a packed and handed to the carrier [ref:eff_1]' },
      { file: 'shipments.log', lineNumber: 2, line: 'ORD-a: packed, handed to carrier' },
      { file: 'shipments.log', lineNumber: 3, line: 'ORD-b packed' },
    ], notifications: [] };
    expect(recordsOf({ kind: 'line', token: 'ORD-a' }, { weak })).toEqual([
      { id: 'shipments.log:1', receipts: ['shipments.log:1', 'ref:eff_1'] },
      { id: 'shipments.log:2', receipts: ['shipments.log:2'] },
    ]);
  });

  it('notifications carry no id a receipt could name', () => {
    const weak = { lines: [], notifications: [{ seq: 1, channel: 'ops', text: 'ORD-a shipped today' }, { seq: 2, channel: 'sales', text: 'ORD-a shipped today' }] };
    expect(recordsOf({ kind: 'notification', channel: 'ops', token: 'ORD-a' }, { weak })).toEqual([{ id: 'notification:1', receipts: 'none' }]);
  });
});

describe('benchmark workloads and fault targets', () => {
  it('every default workload is registered, tags every business identifier, and allows one record per intent', () => {
    for (const name of DEFAULT_WORKLOADS) {
      const intents = workload(name)!.intents('zz9');
      expect(intents.length).toBeGreaterThan(0);
      for (const intent of intents) {
        expect(JSON.stringify(intent.args)).toContain('zz9');
        expect(intent.multiplicity).toBe(1);
        expect(intent.rephrasings.length).toBeGreaterThan(0);
      }
    }
    expect(workload('email-5')!.intents('t').map((i) => i.slot)).toEqual(['0', '1', '2', '3', '4']);
  });

  it('the fault target is drawn from the seed and named by its position among requests to the same path', () => {
    const intents = workload('email-5')!.intents('t');
    const picks = [1, 2, 3, 4, 5, 6].map((seed) => chooseTarget(intents, new Rng(seed, 'target')));
    for (const { target, nth } of picks) expect(nth).toBe(Number(target.slot) + 1);
    expect(chooseTarget(intents, new Rng(4, 'target'))).toEqual(chooseTarget(intents, new Rng(4, 'target')));
    const mixed = workload('charge-then-email')!.intents('t');
    for (let seed = 1; seed <= 6; seed++) expect(chooseTarget(mixed, new Rng(seed, 'target')).nth).toBe(1);
  });

  it('a seeded Rng repeats itself, and forks do not disturb the parent', () => {
    const a = new Rng(7, 'x');
    const b = new Rng(7, 'x');
    b.fork('other').next();
    expect(Array.from({ length: 5 }, () => a.next())).toEqual(Array.from({ length: 5 }, () => b.next()));
    expect(new Rng(7, 'x').uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});
