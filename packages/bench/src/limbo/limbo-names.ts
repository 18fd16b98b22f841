/**
 * LIMBO's fault modes (arXiv 2609.29095), as `effectd bench --limbo` names them in flags and
 * results. They are cell faults beside the design's (names.ts, FAULTS) but never in the default
 * matrix: only the LIMBO lane runs them (limbo/limbo-cases.ts says on which workload each runs).
 */
export const LIMBO_FAULTS = [
  'lost-ack',
  'timeout-late',
  'late-commit-tail',
  'duplicate-delivery',
  'partial-timeout',
  'partial-batch',
  'misleading-500',
  'read-lag',
  'no-read-back',
  // Not one of LIMBO's modes: the fault of the named case "payload drift then reject".
  'payload-drift',
] as const;

export type LimboFaultName = (typeof LIMBO_FAULTS)[number];

export function isLimboFault(name: string): name is LimboFaultName {
  return (LIMBO_FAULTS as readonly string[]).includes(name);
}
