import type { BusinessIdentity, ProviderKind } from './workloads.js';

/** One effect as the provider recorded it, and every receipt that names it (none: the provider issues no id). */
export interface ProviderRecord {
  id: string;
  receipts: string[] | 'none';
}

interface PaymentsOracle { charges: { id: string; metadata: Record<string, string> }[] }
interface EmailOracle { emails: { id: string; to: string[]; headers: Record<string, string> }[] }
interface CloudOracle { instances: { instanceId: string; name: string; terminatedAtMs: number | null }[] }
interface WeakOracle {
  lines: { file: string; lineNumber: number; line: string }[];
  notifications: { seq: number; channel: string; text: string }[];
}

export type Oracles = Partial<Record<ProviderKind, unknown>>;

const REF = /\[ref:([^\]]+)\]/g;

/**
 * The provider-side records of one business identity, read from the providers' oracles only:
 * charges with the invoice id, emails to the recipient from the template, live instances with
 * the name, journal lines naming the order.
 */
export function recordsOf(identity: BusinessIdentity, oracles: Oracles): ProviderRecord[] {
  switch (identity.kind) {
    case 'charge':
      return ((oracles.payments as PaymentsOracle | undefined)?.charges ?? [])
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
  }
}
