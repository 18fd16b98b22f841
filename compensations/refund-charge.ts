import type { CompensationDefinition } from '../src/core/saga/saga-definition.js';

/** Undoes payments.charge with a full refund. A refund can't itself be undone, and says so. */
export const refundCharge: CompensationDefinition<unknown> = {
  name: 'refund-charge',
  tool: 'payments.refund',
  reversibility: 'irreversible',
  irreversibleBecause: 'a refund returns the customer\'s money; undoing it would mean charging them again, which only a new saga may do',
  args: (chargeId) => ({ chargeId }),
};
