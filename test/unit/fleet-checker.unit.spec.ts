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
