import { z } from 'zod';
import { cancelHotelBooking, refundCharge, releaseFlightHold } from '../compensations/index.js';
import { defineSaga } from '../src/core/saga/saga-definition.js';

const tripInput = z.object({
  tripId: z.string().min(1),
  traveller: z.object({ name: z.string().min(1), email: z.email() }),
  flight: z.string().min(1),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'date is YYYY-MM-DD'),
  hotel: z.string().min(1),
  nights: z.number().int().min(1),
  amount: z.union([z.number(), z.string()]),
  currency: z.string().length(3).default('usd'),
});
export type TripInput = z.infer<typeof tripInput>;

/**
 * Hold a flight → book a hotel → charge the card → email the itinerary. The email is irreversible,
 * so it comes last: it runs only once the hold, the booking and the charge have all committed.
 */
export const tripBooking = defineSaga<TripInput>({
  name: 'trip-booking',
  version: 1,
  description: 'Hold a flight, book a hotel, charge the card, email the itinerary.',
  input: tripInput,
  steps: [
    {
      name: 'hold-flight', tool: 'travel.hold-flight', reversibility: 'compensable', compensation: releaseFlightHold,
      args: (trip) => ({ flight: trip.flight, passenger: trip.traveller.name, date: trip.date }),
    },
    {
      name: 'book-hotel', tool: 'travel.book-hotel', reversibility: 'compensable', compensation: cancelHotelBooking,
      args: (trip) => ({ hotel: trip.hotel, guest: trip.traveller.name, checkIn: trip.date, nights: trip.nights }),
    },
    {
      name: 'charge-card', tool: 'payments.charge', reversibility: 'compensable', compensation: refundCharge,
      args: (trip) => ({ invoiceId: `TRIP-${trip.tripId}`, amount: trip.amount, currency: trip.currency, description: `Trip ${trip.tripId}` }),
    },
    {
      name: 'email-itinerary', tool: 'email.send', reversibility: 'irreversible',
      args: (trip, receipts) => ({
        to: trip.traveller.email, template: 'itinerary', subject: `Your trip ${trip.tripId}`,
        text: `Flight ${trip.flight} on ${trip.date} (hold ${receipts['hold-flight']}), ${trip.hotel} for ${trip.nights} night(s) (booking ${receipts['book-hotel']}), paid (charge ${receipts['charge-card']}).`,
      }),
    },
  ],
});
