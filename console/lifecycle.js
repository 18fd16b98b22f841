// The effect lifecycle as effectd serves it (GET /v1/meta, from src/core/effect-lifecycle.ts): every
// set of states the console asks about is taken from there, so none can disagree with the server.

/** Every state, in lifecycle order. */
export const STATES = [];
/** Not settled for good: a view showing one keeps refreshing (`open`). */
export const OPEN = new Set();
/** Needs a human, always or once effectd has no lookup left (`human` other than `no`). */
export const HUMAN = new Set();
/** An operator may settle it with what they found at the provider (`resolvable`). */
export const RESOLVABLE = new Set();
/** An operator may let it go (`releasable`). */
export const RELEASABLE = new Set();

/** Takes the sets from a GET /v1/meta answer, replacing those of an earlier sign-in. */
export function learnLifecycle(meta) {
  for (const set of [OPEN, HUMAN, RESOLVABLE, RELEASABLE]) set.clear();
  STATES.length = 0;
  for (const row of meta.lifecycle) {
    STATES.push(row.status);
    if (row.open) OPEN.add(row.status);
    if (row.human !== 'no') HUMAN.add(row.status);
    if (row.resolvable) RESOLVABLE.add(row.status);
    if (row.releasable) RELEASABLE.add(row.status);
  }
}

/** Settled for good: nothing will move it any more. */
export function closed(state) {
  return !OPEN.has(state);
}
