import type { CompensationDefinition } from '../src/core/saga/saga-definition.js';

/** Undoes travel.hold-flight: releasing a hold twice is refused by the provider as already released, which counts as done. */
export const releaseFlightHold: CompensationDefinition<unknown> = {
  name: 'release-flight-hold',
  tool: 'travel.release-hold',
  reversibility: 'idempotent',
  args: (holdId) => ({ holdId }),
};
