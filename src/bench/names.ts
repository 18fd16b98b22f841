/** The names used in flags and in results, fixed so runs stay comparable across versions (DESIGN.md, "How we prove it"). */
export const FAULTS = ['before-dispatch', 'before-mutation', 'after-mutation', 'before-record', 'cancel', 'late-commit', 'crash-restart', 'rebalance', 'key-expired', 'param-drift', 'none'] as const;
export const POLICIES = ['blind', 'sdk-retry', 'native-or-never', 'effectd'] as const;

export type FaultName = (typeof FAULTS)[number];
export type PolicyName = (typeof POLICIES)[number];

export function isFault(name: string): name is FaultName {
  return (FAULTS as readonly string[]).includes(name);
}

export function isPolicy(name: string): name is PolicyName {
  return (POLICIES as readonly string[]).includes(name);
}
