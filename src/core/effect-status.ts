// Its own module, free of imports, so the agent SDK (@effectd/sdk) ships it without the core's graph.

/**
 * Where an effect stands, in the order of docs/architecture.md's lifecycle table. `dispatching`
 * turns into `unknown` by itself when its lease runs out; `held` is a new step whose business
 * content or target matches an effect that is done or still open: never dispatched unless released.
 * What each status means and allows is src/core/effect-lifecycle.ts.
 */
export const EFFECT_STATUSES = ['declared', 'held', 'dispatching', 'unknown', 'escalated', 'committed', 'failed_before_effect', 'terminal_failure'] as const;

export type EffectStatus = (typeof EFFECT_STATUSES)[number];
