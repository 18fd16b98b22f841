import type { IdSource } from './ids.js';
import type { Call, Reply, Route, SimProvider } from './sim-http.js';
import type { SimClock } from './sim-clock.js';
import { StripeIdempotencyLayer } from './stripe-idempotency.js';
import { stripeError, stripeFaultReply } from './stripe-replies.js';
import { ReservationLedger } from './travel-ledger.js';
import { parseFlightHoldParams, parseHotelBookingParams, parseUndoParams } from './travel-params.js';

export interface TravelOptions {
  /** Idempotency-key retention on the SimClock (Stripe-like: 24 h). */
  retentionMs?: number;
  /** How long (SimClock) before a hold, booking, release or cancellation shows up in the `?ref=` lists. */
  listLagMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A trip-booking provider with Stripe-style idempotency: flight holds (released as compensation)
 * and hotel bookings (cancelled as compensation), found again by `metadata.effectd_ref`.
 */
export class TravelSimulator implements SimProvider {
  readonly routes: readonly Route[];
  private readonly holds: ReservationLedger;
  private readonly bookings: ReservationLedger;
  private readonly keys: StripeIdempotencyLayer;
  private readonly listLagMs: number;

  constructor(clock: SimClock, ids: IdSource, options: TravelOptions = {}) {
    this.listLagMs = options.listLagMs ?? 0;
    this.keys = new StripeIdempotencyLayer(clock, {
      retentionMs: options.retentionMs ?? DAY_MS,
      inUseErrorType: 'invalid_request_error',
      mismatchErrorCode: undefined,
      retryHint: (reply) => reply,
    });
    this.holds = new ReservationLedger(clock, ids, {
      object: 'flight_hold',
      idPrefix: 'fh',
      noun: 'flight hold',
      liveStatus: 'held',
      undoneStatus: 'released',
      undoneAtField: 'releasedAtMs',
      undoObject: 'flight_hold_release',
      undoIdPrefix: 'rel',
      parentField: 'hold',
      alreadyUndoneCode: 'already_released',
      undoneVerb: 'released',
    });
    this.bookings = new ReservationLedger(clock, ids, {
      object: 'hotel_booking',
      idPrefix: 'hb',
      noun: 'hotel booking',
      liveStatus: 'confirmed',
      undoneStatus: 'cancelled',
      undoneAtField: 'cancelledAtMs',
      undoObject: 'hotel_booking_cancellation',
      undoIdPrefix: 'cxl',
      parentField: 'booking',
      alreadyUndoneCode: 'already_cancelled',
      undoneVerb: 'cancelled',
    });
    const ref = (call: Call): string | null => call.query.get('ref');
    this.routes = [
      {
        method: 'POST',
        pattern: '/flights/holds',
        write: (call) => this.keys.handle(call, parseFlightHoldParams, ({ metadata, ...fields }, key) => this.holds.create(fields, metadata, key)),
      },
      { method: 'GET', pattern: '/flights/holds', read: (call) => this.holds.list('/flights/holds', ref(call), this.listLagMs) },
      { method: 'GET', pattern: '/flights/holds/:id', read: (call) => this.holds.retrieve(call.params.id) },
      {
        method: 'POST',
        pattern: '/flights/holds/:id/release',
        write: (call) => {
          const id = call.params.id;
          return this.keys.handle(call, parseUndoParams, ({ metadata }, key) => this.holds.undo(id, metadata, key));
        },
      },
      { method: 'GET', pattern: '/flights/releases', read: (call) => this.holds.listUndos('/flights/releases', ref(call), this.listLagMs) },
      {
        method: 'POST',
        pattern: '/hotels/bookings',
        write: (call) => this.keys.handle(call, parseHotelBookingParams, ({ metadata, ...fields }, key) => this.bookings.create(fields, metadata, key)),
      },
      { method: 'GET', pattern: '/hotels/bookings', read: (call) => this.bookings.list('/hotels/bookings', ref(call), this.listLagMs) },
      { method: 'GET', pattern: '/hotels/bookings/:id', read: (call) => this.bookings.retrieve(call.params.id) },
      {
        method: 'POST',
        pattern: '/hotels/bookings/:id/cancel',
        write: (call) => {
          const id = call.params.id;
          return this.keys.handle(call, parseUndoParams, ({ metadata }, key) => this.bookings.undo(id, metadata, key));
        },
      },
      { method: 'GET', pattern: '/hotels/cancellations', read: (call) => this.bookings.listUndos('/hotels/cancellations', ref(call), this.listLagMs) },
    ];
  }

  /** Every hold and booking, and every release and cancellation EXECUTION (refused ones with `applied: false`). */
  oracle(): { holds: unknown[]; bookings: unknown[]; releases: unknown[]; cancellations: unknown[] } {
    return {
      holds: this.holds.oracleReservations(),
      bookings: this.bookings.oracleReservations(),
      releases: this.holds.oracleUndos(),
      cancellations: this.bookings.oracleUndos(),
    };
  }

  reset(): void {
    this.holds.reset();
    this.bookings.reset();
    this.keys.clear();
  }

  faultReply(status: number, body?: unknown): Reply {
    return stripeFaultReply(status, body);
  }

  malformedBody(message: string): Reply {
    return stripeError(400, { type: 'invalid_request_error', message: `Invalid request body: ${message}` });
  }

  notFound(method: string, path: string): Reply {
    return stripeError(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` });
  }
}
