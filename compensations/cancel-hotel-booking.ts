import type { CompensationDefinition } from '../src/core/saga/saga-definition.js';

/** Undoes travel.book-hotel. */
export const cancelHotelBooking: CompensationDefinition<unknown> = {
  name: 'cancel-hotel-booking',
  tool: 'travel.cancel-booking',
  reversibility: 'idempotent',
  args: (bookingId) => ({ bookingId }),
};
