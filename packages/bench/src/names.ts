import type { LimboFaultName } from './limbo/limbo-names.js';

/** The names used in flags and in results, fixed so runs stay comparable across versions (docs/design.md, "How we prove it"). */
export const FAULTS = ['before-dispatch', 'before-mutation', 'after-mutation', 'before-record', 'cancel', 'late-commit', 'crash-restart', 'rebalance', 'key-expired', 'param-drift', 'stored-failure', 'retention-shorter-than-declared', 'late-delivery', 'none'] as const;
export const POLICIES = ['blind', 'sdk-retry', 'native-or-never', 'effectd'] as const;

/**
 * Columns measured beside the four policies, each named for what it changes. `effectd+redecide`
 * is effectd with a model that ignores "do not start another": on every `unknown` it decides again
 * (a new step, a new effect), so only effectd's content index stands between it and a duplicate.
 */
export const POLICY_VARIANTS = ['effectd+redecide'] as const;
export const BENCH_POLICIES = [...POLICIES, ...POLICY_VARIANTS] as const;

/**
 * The MCP lane (`--mcp`), not in the default matrix: `effectd-mcp` is the agent reaching effectd
 * through the official MCP client SDK at /mcp (identity in `_meta`, a re-issue under a new JSON-RPC
 * id after a broken stream or an `unknown`); `mcp-direct` is the same client calling an upstream MCP
 * server around the provider directly, re-issuing the same way, with no ledger behind it.
 */
export const MCP_POLICIES = ['effectd-mcp', 'mcp-direct'] as const;
/** Every column a run can have, in the order tables show them. */
export const ALL_POLICIES = [...BENCH_POLICIES, ...MCP_POLICIES] as const;
/**
 * The faults the MCP lane runs: lost replies at the provider boundary and faults around the caller
 * (a broken response stream, a cancelled call, effectd SIGKILLed), which an MCP front door meets
 * exactly as the HTTP one does. Not run (yet): rebalance (a second instance, or Kafka), key-expired
 * (the short-key instance), param-drift (a conflicting re-declaration over MCP), the
 * stored-failure / retention-shorter-than-declared provider profiles, late-delivery (the proof of
 * absence and its audit are the reconciler's, whatever the ingress), and before-dispatch: on the
 * multi-email workloads effectd's pooled keep-alive socket to the proxy the fault takes down is
 * sometimes reset instead of refused, so effectd (rightly) answers `unknown` and settles it, but
 * the cell's evidence that the fault fired ("never sent") is missing and the cell proves nothing
 * (2 of 24 cells in a 3-seed run); the proxy must refuse cleanly first.
 */
export const MCP_FAULTS: readonly FaultName[] = ['before-mutation', 'after-mutation', 'before-record', 'cancel', 'late-commit', 'crash-restart', 'none'];

/** The design's faults (docs/design.md): the default matrix runs them. */
export type DesignFaultName = (typeof FAULTS)[number];
/** Any cell's fault: the design's, or one of LIMBO's fault modes (only `--limbo` runs those). */
export type FaultName = DesignFaultName | LimboFaultName;
export type PolicyName = (typeof POLICIES)[number];
export type BenchPolicy = (typeof ALL_POLICIES)[number];
export type McpPolicyName = (typeof MCP_POLICIES)[number];

/** Cells whose system under test is effectd (the official column and its variants). */
export function isEffectd(policy: BenchPolicy): boolean {
  return policy === 'effectd' || policy === 'effectd+redecide' || policy === 'effectd-mcp';
}

/**
 * Faults where the provider itself breaks its contract in a way no caller can prevent (it forgets
 * keys sooner than it declares): a duplicate there is the provider's, and what counts is whether
 * effectd detected it and put it before a human. Anywhere else a duplicate is effectd's failure.
 */
export const CONTRACT_BREAKING_FAULTS: readonly FaultName[] = ['retention-shorter-than-declared'];

/**
 * effectd's duplicates its promise does not excuse: all of them, except detected ones under a fault
 * where the provider broke its contract; and every late arrival it did not detect (`lateUndetected`:
 * a request that reached the provider after the settle window and committed, which effectd neither
 * found nor recorded as a late arrival — an object at the provider for an effect it calls not_done,
 * usually beside the new step's). A late arrival it detected is queued for an operator with its undo
 * and is not counted in `duplicates` (scoring.ts): it is reported as `lateDetected`.
 */
export function undetectedDuplicates(cell: { fault: FaultName; duplicates: number; detectedDuplicates?: number; lateUndetected?: number }): number {
  const duplicates = CONTRACT_BREAKING_FAULTS.includes(cell.fault) ? Math.max(0, cell.duplicates - (cell.detectedDuplicates ?? 0)) : cell.duplicates;
  return duplicates + (cell.lateUndetected ?? 0);
}

export function isMcpPolicy(policy: BenchPolicy): policy is McpPolicyName {
  return (MCP_POLICIES as readonly string[]).includes(policy);
}

export function isFault(name: string): name is DesignFaultName {
  return (FAULTS as readonly string[]).includes(name);
}

export function isPolicy(name: string): name is BenchPolicy {
  return (ALL_POLICIES as readonly string[]).includes(name);
}

/** Stalls of the benchmark's event loop beyond this many ms void the compressed-time contracts (a cell's `benchStallMs`). */
export const STALL_LIMIT_MS = 250;
