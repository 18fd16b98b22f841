import type { SagaDefinition } from '../src/core/saga/saga-definition.js';
import { subscriptionRenewal } from './subscription-renewal.saga.js';
import { tripBooking } from './trip-booking.saga.js';

/** Every saga effectd registers at start (checked against the configured tools then). Add yours here. */
export const sagas: SagaDefinition<any>[] = [tripBooking, subscriptionRenewal];
