// Its own module, free of imports, so the agent SDK (@effectd/sdk) ships it without the core's graph.

/** Where an effect stands. `dispatching` turns into `unknown` by itself when its lease runs out. */
export type EffectStatus =
  | 'declared'
  | 'dispatching'
  | 'committed'
  | 'failed_before_effect'
  | 'terminal_failure'
  | 'unknown'
  | 'escalated'
  /** A new step whose business content matches an effect that is done or still open: never dispatched unless released. */
  | 'held';
