import { recordsOf, type Oracles } from '../ground-truth.js';
import type { BusinessIdentity } from '../workloads.js';

interface Listed { id?: string; instanceId?: string; file?: string; lineNumber?: number; seq?: number; terminatedAtMs?: number | null }

/** Every record the cell's providers hold, named as recordsOf names them (a terminated instance is gone). */
function allRecordIds(oracles: Oracles): string[] {
  const list = (kind: keyof Oracles, field: string): Listed[] => ((oracles[kind] as Record<string, Listed[]> | undefined)?.[field] ?? []);
  return [
    ...list('payments', 'charges').map((c) => c.id!),
    ...list('payments-v2', 'charges').map((c) => c.id!),
    ...list('email', 'emails').map((e) => e.id!),
    ...list('cloud', 'instances').filter((i) => i.terminatedAtMs === null).map((i) => i.instanceId!),
    ...list('weak', 'lines').map((l) => `${l.file}:${l.lineNumber}`),
    ...list('weak', 'notifications').map((n) => `notification:${n.seq}`),
    ...list('travel', 'holds').map((h) => h.id!),
    ...list('travel', 'bookings').map((b) => b.id!),
  ];
}

/**
 * Collateral writes: records at the cell's providers (fresh per cell, so everything in them is the
 * cell's) that none of the workload's intents names: an email to an address the agent never meant.
 */
export function collateralWrites(oracles: Oracles, identities: readonly BusinessIdentity[]): number {
  const intended = new Set(identities.flatMap((identity) => recordsOf(identity, oracles).map((r) => r.id)));
  return allRecordIds(oracles).filter((id) => !intended.has(id)).length;
}
