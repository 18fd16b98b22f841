/** The names used in flags and in results, fixed so runs stay comparable across versions (DESIGN.md, "How we prove it"). */
export const FAULTS = ['before-dispatch', 'before-mutation', 'after-mutation', 'before-record', 'cancel', 'late-commit', 'crash-restart', 'rebalance', 'key-expired', 'param-drift', 'stored-failure', 'retention-shorter-than-declared', 'none'] as const;
export const POLICIES = ['blind', 'sdk-retry', 'native-or-never', 'effectd'] as const;

/**
 * Columns measured beside the four policies, each named for what it changes. `effectd+redecide`
 * is effectd with a model that ignores "do not start another": on every `unknown` it decides again
 * (a new step, a new effect), so only effectd's content index stands between it and a duplicate.
 */
export const POLICY_VARIANTS = ['effectd+redecide'] as const;
export const BENCH_POLICIES = [...POLICIES, ...POLICY_VARIANTS] as const;

export type FaultName = (typeof FAULTS)[number];
export type PolicyName = (typeof POLICIES)[number];
export type BenchPolicy = (typeof BENCH_POLICIES)[number];

/** Cells whose system under test is effectd (the official column and its variants). */
export function isEffectd(policy: BenchPolicy): boolean {
  return policy === 'effectd' || policy === 'effectd+redecide';
}

/**
 * Faults where the provider itself breaks its contract in a way no caller can prevent (it forgets
 * keys sooner than it declares): a duplicate there is the provider's, and what counts is whether
 * effectd detected it and put it before a human. Anywhere else a duplicate is effectd's failure.
 */
export const CONTRACT_BREAKING_FAULTS: readonly FaultName[] = ['retention-shorter-than-declared'];

/** effectd's duplicates its promise does not excuse: all of them, except detected ones under a fault where the provider broke its contract. */
export function undetectedDuplicates(cell: { fault: FaultName; duplicates: number; detectedDuplicates?: number }): number {
  return CONTRACT_BREAKING_FAULTS.includes(cell.fault) ? Math.max(0, cell.duplicates - (cell.detectedDuplicates ?? 0)) : cell.duplicates;
}

export function isFault(name: string): name is FaultName {
  return (FAULTS as readonly string[]).includes(name);
}

export function isPolicy(name: string): name is BenchPolicy {
  return (BENCH_POLICIES as readonly string[]).includes(name);
}

/** Stalls of the benchmark's event loop beyond this many ms void the compressed-time contracts (a cell's `benchStallMs`). */
export const STALL_LIMIT_MS = 250;
