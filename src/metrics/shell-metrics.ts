import type { OutcomeClass } from '../core/events.js';

/** What the shell reports; the prom-client adapter is the only place that knows Prometheus. */
export interface ShellMetrics {
  ledgerAppend(ledger: string, ms: number): void;
  attempt(tool: string, outcome: OutcomeClass): void;
  providerCall(tool: string, ms: number): void;
  replayed(tool: string): void;
  /** A new step held by the content index (a duplicate intent prevented). */
  held(tool: string): void;
  rejected(reason: string): void;
  reconciliationCheck(tool: string, verdict: string): void;
  escalated(tool: string): void;
  /** The provider holds more than one object for one effect (found by the audit after a resend). */
  duplicateDetected(tool: string): void;
  /** An effect proven absent was found at the provider later (its request arrived after the settle window). */
  lateArrival(tool: string): void;
  resolved(outcome: string): void;
  /** An escalated effect settled: by a later lookup (no human needed after all) or by a human. */
  escalationSettled(tool: string, by: 'lookup' | 'human'): void;
  /** An effect left `unknown`/`escalated` for a settled state after `ms`. */
  leftUnknown(tool: string, ms: number): void;
}

export const noopShellMetrics: ShellMetrics = {
  ledgerAppend() {},
  attempt() {},
  providerCall() {},
  replayed() {},
  held() {},
  rejected() {},
  reconciliationCheck() {},
  escalated() {},
  duplicateDetected() {},
  lateArrival() {},
  resolved() {},
  escalationSettled() {},
  leftUnknown() {},
};
