import type { BusinessIdentity, ProviderKind } from './workloads.js';

/** One effect as the provider recorded it, and every receipt that names it (none: the provider issues no id). */
export interface ProviderRecord {
  id: string;
  receipts: string[] | 'none';
}

interface PaymentsOracle {
  charges: { id: string; metadata: Record<string, string>; amount: number; amount_refunded: number }[];
  refunds: { id: string; charge: string }[];
  /** Refund executions the provider refused (a charge that does not exist, one already refunded). */
  refundRefusals?: { charge: string; code: string }[];
}
interface Reservation { id: string; metadata: Record<string, string> }
interface UndoExecution { id: string; applied: boolean; reason: string | null }
interface TravelOracle {
  holds: (Reservation & { flight: string; passenger: string; date: string; releasedAtMs: number | null })[];
  bookings: (Reservation & { hotel: string; guest: string; checkIn: string; cancelledAtMs: number | null })[];
  releases: (UndoExecution & { hold: string })[];
  cancellations: (UndoExecution & { booking: string })[];
}
interface EmailOracle { emails: { id: string; to: string[]; headers: Record<string, string> }[] }
interface CloudOracle { instances: { instanceId: string; name: string; terminatedAtMs: number | null }[] }
interface WeakOracle {
  lines: { file: string; lineNumber: number; line: string }[];
  notifications: { seq: number; channel: string; text: string }[];
}

export type Oracles = Partial<Record<ProviderKind, unknown>>;

/** The amounts (minor units) of every charge of one invoice the payments providers hold, in the order they were made. */
export function chargedAmounts(invoiceId: string, oracles: Oracles): number[] {
  return [...((oracles.payments as PaymentsOracle | undefined)?.charges ?? []), ...((oracles['payments-v2'] as PaymentsOracle | undefined)?.charges ?? [])]
    .filter((c) => c.metadata.invoice_id === invoiceId)
    .map((c) => c.amount);
}

const REF = /\[ref:([^\]]+)\]/g;

/**
 * The provider-side records of one business identity, read from the providers' oracles only:
 * charges with the invoice id, emails to the recipient from the template, live instances with
 * the name, journal lines naming the order. A charge is read from either payments profile (v1, v2).
 */
export function recordsOf(identity: BusinessIdentity, oracles: Oracles): ProviderRecord[] {
  switch (identity.kind) {
    case 'charge':
      // Stripe v1 or v2: a cell has one of them, and a charge is a charge either way.
      return [...((oracles.payments as PaymentsOracle | undefined)?.charges ?? []), ...((oracles['payments-v2'] as PaymentsOracle | undefined)?.charges ?? [])]
        .filter((c) => c.metadata.invoice_id === identity.invoiceId)
        .map((c) => ({ id: c.id, receipts: [c.id] }));
    case 'email':
      return ((oracles.email as EmailOracle | undefined)?.emails ?? [])
        .filter((e) => e.to.some((to) => to.toLowerCase() === identity.to.toLowerCase()) && e.headers['X-Template'] === identity.template)
        .map((e) => ({ id: e.id, receipts: [e.id] }));
    case 'instance':
      return ((oracles.cloud as CloudOracle | undefined)?.instances ?? [])
        .filter((i) => i.name === identity.name && i.terminatedAtMs === null)
        .map((i) => ({ id: i.instanceId, receipts: [i.instanceId] }));
    case 'line':
      return ((oracles.weak as WeakOracle | undefined)?.lines ?? [])
        .filter((l) => l.line.includes(identity.token))
        .map((l) => ({ id: `${l.file}:${l.lineNumber}`, receipts: [`${l.file}:${l.lineNumber}`, ...[...l.line.matchAll(REF)].map((m) => `ref:${m[1]}`)] }));
    case 'notification':
      return ((oracles.weak as WeakOracle | undefined)?.notifications ?? [])
        .filter((n) => n.channel === identity.channel && n.text.includes(identity.token))
        .map((n) => ({ id: `notification:${n.seq}`, receipts: 'none' }));
    case 'hold':
      return travel(oracles).holds
        .filter((h) => h.flight === identity.flight && same(h.passenger, identity.passenger) && h.date === identity.date)
        .map((h) => ({ id: h.id, receipts: [h.id] }));
    case 'booking':
      return travel(oracles).bookings
        .filter((b) => b.hotel === identity.hotel && same(b.guest, identity.guest) && b.checkIn === identity.checkIn)
        .map((b) => ({ id: b.id, receipts: [b.id] }));
    case 'undo':
      // A compensation's effect is judged on the record it undoes (sagaTruth), not counted as records of its own.
      return [];
  }
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const travel = (oracles: Oracles): TravelOracle => (oracles.travel as TravelOracle | undefined) ?? { holds: [], bookings: [], releases: [], cancellations: [] };
const payments = (oracles: Oracles): PaymentsOracle => (oracles.payments as PaymentsOracle | undefined) ?? { charges: [], refunds: [] };

/** What a saga left in the world, checked against the providers' oracles only (issue 7's "never" lines). */
export interface SagaTruth {
  /** Itinerary / receipt emails sent while no charge of the saga is settled (present and not refunded). */
  emailWithoutCharge: number;
  /** After a saga the system calls failed: holds not released, bookings not cancelled, charges not refunded (and not handed to a human). */
  leftInPlace: number;
  /** Records left in place whose undo the system explicitly handed to a human (effectd's `compensation_failed`). */
  leftWithHuman: number;
  /** Undo executions applied twice to one record: a second applied release or cancellation, a second refund of one charge. */
  compensatedTwice: number;
  /** Undo executions aimed at a record that does not exist (`resource_missing`): the compensation of a step that did not happen. */
  phantomCompensations: number;
}

/**
 * The saga checks, from the oracles of one cell's fresh providers (everything in them belongs to
 * the cell: the proxies refuse other cells' requests). `failed` is whether the system under test
 * ended the saga as failed (compensated, or gave up and undid what it believed committed).
 */
export function sagaTruth(chargeInvoice: string, email: { to: string; template: string }, failed: boolean, oracles: Oracles, undoWithHuman: readonly string[] = []): SagaTruth {
  const t = travel(oracles);
  const p = payments(oracles);
  const charges = p.charges.filter((c) => c.metadata.invoice_id === chargeInvoice);
  const settledCharge = charges.some((c) => c.amount_refunded < c.amount);
  const emails = recordsOf({ kind: 'email', ...email }, oracles).length;
  const refundsPerCharge = new Map<string, number>();
  for (const refund of p.refunds) refundsPerCharge.set(refund.charge, (refundsPerCharge.get(refund.charge) ?? 0) + 1);
  const appliedPer = (executions: { applied: boolean; of: string }[]) => {
    const per = new Map<string, number>();
    for (const e of executions) if (e.applied) per.set(e.of, (per.get(e.of) ?? 0) + 1);
    return [...per.values()];
  };
  const beyondOne = (counts: Iterable<number>) => [...counts].reduce((s, n) => s + Math.max(0, n - 1), 0);
  const live = failed
    ? [...t.holds.filter((h) => h.releasedAtMs === null), ...t.bookings.filter((b) => b.cancelledAtMs === null), ...charges.filter((c) => c.amount_refunded < c.amount)].map((r) => r.id)
    : [];
  return {
    emailWithoutCharge: settledCharge ? 0 : emails,
    leftInPlace: live.filter((id) => !undoWithHuman.includes(id)).length,
    leftWithHuman: live.filter((id) => undoWithHuman.includes(id)).length,
    compensatedTwice: beyondOne(appliedPer(t.releases.map((r) => ({ applied: r.applied, of: r.hold })))) + beyondOne(appliedPer(t.cancellations.map((c) => ({ applied: c.applied, of: c.booking })))) + beyondOne(refundsPerCharge.values()),
    phantomCompensations: [...t.releases, ...t.cancellations].filter((e) => !e.applied && e.reason === 'resource_missing').length
      + (p.refundRefusals ?? []).filter((r) => r.code === 'resource_missing').length,
  };
}
