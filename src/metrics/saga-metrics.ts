/**
 * What the saga runner reports. `outcome` is how a run ended: `completed`, `compensated`
 * (a proven failure undone in reverse order), `compensation_failed`, or `paused` (an unknown step
 * waits for reconciliation or a human).
 */
export interface SagaMetrics {
  sagaRun(saga: string, outcome: string): void;
  /** One compensation dispatched (it is an effect too, counted under its own tool as well). */
  compensation(tool: string): void;
}

export const noopSagaMetrics: SagaMetrics = {
  sagaRun() {},
  compensation() {},
};
