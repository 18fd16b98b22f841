import type { FaultName } from '../names.js';
import type { LimboFaultName } from './limbo-names.js';
import './limbo-workloads.js';

/**
 * What `effectd bench --limbo` runs: each of LIMBO's fault modes on a workload where it bites, and
 * the six cases of the LIMBO-style benchmark another project published, by their names. A case is
 * one (workload, fault) pair, so a cell's workload and fault name its case.
 */
export interface LimboCase {
  name: string;
  kind: 'fault mode' | 'case';
  workload: string;
  fault: FaultName;
  /** What the case shows, in a line (docs/benchmark.md, "LIMBO's fault modes"). */
  about: string;
}

const mode = (fault: LimboFaultName, workload: string, about: string): LimboCase => ({ name: fault, kind: 'fault mode', workload, fault, about });

export const LIMBO_CASES: readonly LimboCase[] = [
  mode('lost-ack', 'charge', 'the charge commits, its reply is lost'),
  mode('timeout-late', 'charge', 'the caller times out; the charge commits 90 s later'),
  mode('late-commit-tail', 'charge', 'the caller times out; the charge commits 40 s to 2 h later (log-uniform)'),
  mode('duplicate-delivery', 'email-5', 'one email\'s tool call is delivered twice'),
  mode('partial-timeout', 'email-5', 'the 5 emails all time out; some of them were sent'),
  mode('partial-batch', 'email-5', 'the 5 emails are all answered 502; some of them were sent'),
  mode('misleading-500', 'charge', 'the charge commits and is answered 500 (replayed under its key)'),
  mode('read-lag', 'charge', 'search lags 120–180 s; the charge commits 90 s after the caller timed out'),
  mode('no-read-back', 'notify', 'the notification (no key, no lookup) is posted, its reply is lost'),
  { name: 'new-attempt-identity', kind: 'case', workload: 'reminder-repeat', fault: 'none', about: 'control: the same email again under a new attempt identity, declared: both must be sent' },
  { name: 'lost-ack-reconcile', kind: 'case', workload: 'charge-then-email', fault: 'lost-ack', about: 'a lost acknowledgement is reconciled; the receipt email follows once' },
  { name: 'truth-unavailable-blocks', kind: 'case', workload: 'notify-then-email', fault: 'no-read-back', about: 'the truth is unavailable: `unknown` blocks the dependent email' },
  { name: 'eventual-consistency', kind: 'case', workload: 'charge-then-email', fault: 'read-lag', about: 'eventual consistency: block the email until the charge is reconciled' },
  { name: 'redelivery-replay', kind: 'case', workload: 'charge', fault: 'duplicate-delivery', about: 'the charge command is redelivered: replay the recorded outcome' },
  { name: 'payload-drift-reject', kind: 'case', workload: 'email-drift', fault: 'payload-drift', about: 'the repair rewrites the recipient: reject the changed intent' },
];

/** The quick set (the int test): one case per way LIMBO's faults bite, a few cells. */
export const LIMBO_QUICK_CASES: readonly string[] = ['lost-ack', 'timeout-late', 'duplicate-delivery', 'partial-batch', 'misleading-500', 'no-read-back', 'redelivery-replay', 'truth-unavailable-blocks'];

/** The case a cell of the LIMBO lane ran (its workload and fault name it). */
export function caseOf(cell: { workload: string; fault: FaultName }): LimboCase | undefined {
  return LIMBO_CASES.find((c) => c.workload === cell.workload && c.fault === cell.fault);
}
