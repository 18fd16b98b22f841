import type { IdSource } from './ids.js';
import { json, type Reply } from './sim-http.js';
import type { SimClock } from './sim-clock.js';
import { stripeError } from './stripe-replies.js';

/** The words one kind of reservation is described with (a flight hold and its release, a hotel booking and its cancellation). */
export interface LedgerNames {
  /** `object` of a reservation, e.g. `flight_hold`. */
  object: string;
  idPrefix: string;
  /** For messages, e.g. `flight hold`. */
  noun: string;
  liveStatus: string;
  undoneStatus: string;
  /** Oracle field of the moment the reservation was undone, e.g. `releasedAtMs`. */
  undoneAtField: string;
  /** `object` of an undo record, e.g. `flight_hold_release`. */
  undoObject: string;
  undoIdPrefix: string;
  /** Field of an undo record naming its reservation, e.g. `hold`. */
  parentField: string;
  /** Error code of an undo of a reservation already undone, e.g. `already_released`. */
  alreadyUndoneCode: string;
  /** Past participle for messages, e.g. `released`. */
  undoneVerb: string;
}

type View = Record<string, unknown>;

interface Reservation {
  id: string;
  fields: Record<string, unknown>;
  metadata: Record<string, string>;
  idempotencyKey: string | null;
  createdAtMs: number;
  undoneAtMs: number | null;
}

/** One EXECUTION of an undo (release, cancellation), applied or refused: the oracle keeps them all. */
interface UndoAttempt {
  id: string;
  parentId: string;
  metadata: Record<string, string>;
  applied: boolean;
  reason: string | null;
  idempotencyKey: string | null;
  createdAtMs: number;
}

/**
 * Reservations that can be undone once. Every undo execution is recorded, including the refused
 * ones (already undone, unknown id), so a checker can see a compensation applied twice or a
 * compensation of a step that never happened. Only applied undos are visible through the API.
 */
export class ReservationLedger {
  private reservations = new Map<string, Reservation>();
  private attempts: UndoAttempt[] = [];

  constructor(
    private readonly clock: SimClock,
    private readonly ids: IdSource,
    private readonly names: LedgerNames,
  ) {}

  reset(): void {
    this.reservations = new Map();
    this.attempts = [];
  }

  create(fields: Record<string, unknown>, metadata: Record<string, string>, idempotencyKey: string | null): Reply {
    const reservation: Reservation = {
      id: this.ids.next(this.names.idPrefix),
      fields: structuredClone(fields),
      metadata: structuredClone(metadata),
      idempotencyKey,
      createdAtMs: this.clock.now(),
      undoneAtMs: null,
    };
    this.reservations.set(reservation.id, reservation);
    return json(200, this.view(reservation));
  }

  /** Existence and the undone state are checked at execution, so their errors are frozen under the key too. */
  undo(id: string, metadata: Record<string, string>, idempotencyKey: string | null): Reply {
    const reservation = this.reservations.get(id);
    const refusal = reservation === undefined ? 'resource_missing' : reservation.undoneAtMs !== null ? this.names.alreadyUndoneCode : null;
    const createdAtMs = this.clock.now();
    this.attempts.push({
      id: this.ids.next(this.names.undoIdPrefix),
      parentId: id,
      metadata: structuredClone(metadata),
      applied: refusal === null,
      reason: refusal,
      idempotencyKey,
      createdAtMs,
    });
    if (reservation === undefined) return this.missing(id);
    if (refusal !== null) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: this.names.alreadyUndoneCode,
        message: `The ${this.names.noun} ${id} has already been ${this.names.undoneVerb}.`,
      });
    }
    reservation.undoneAtMs = createdAtMs;
    return json(200, this.view(reservation));
  }

  retrieve(id: string): Reply {
    const reservation = this.reservations.get(id);
    return reservation === undefined ? this.missing(id) : json(200, this.view(reservation));
  }

  /** Reservations whose `metadata.effectd_ref` is `ref` (all without one), newest first, `lagMs` after creation. */
  list(url: string, ref: string | null, lagMs: number): Reply {
    const visibleBefore = this.clock.now() - lagMs;
    const data = [...this.reservations.values()]
      .filter((r) => r.createdAtMs <= visibleBefore && (ref === null || r.metadata.effectd_ref === ref))
      .reverse()
      .map((r) => this.view(r));
    return json(200, { object: 'list', url, has_more: false, data });
  }

  /** Applied undos whose `metadata.effectd_ref` is `ref` (all without one), newest first. */
  listUndos(url: string, ref: string | null, lagMs: number): Reply {
    const visibleBefore = this.clock.now() - lagMs;
    const data = this.attempts
      .filter((a) => a.applied && a.createdAtMs <= visibleBefore && (ref === null || a.metadata.effectd_ref === ref))
      .reverse()
      .map((a) => this.undoView(a));
    return json(200, { object: 'list', url, has_more: false, data });
  }

  oracleReservations(): View[] {
    return [...this.reservations.values()].map((r) => ({
      ...this.view(r),
      idempotencyKey: r.idempotencyKey,
      createdAtMs: r.createdAtMs,
      [this.names.undoneAtField]: r.undoneAtMs,
    }));
  }

  oracleUndos(): View[] {
    return this.attempts.map((a) => ({
      ...this.undoView(a),
      applied: a.applied,
      reason: a.reason,
      idempotencyKey: a.idempotencyKey,
      createdAtMs: a.createdAtMs,
    }));
  }

  private view(r: Reservation): View {
    return {
      id: r.id,
      object: this.names.object,
      ...structuredClone(r.fields),
      status: r.undoneAtMs === null ? this.names.liveStatus : this.names.undoneStatus,
      metadata: structuredClone(r.metadata),
      created: Math.floor(r.createdAtMs / 1000),
    };
  }

  private undoView(a: UndoAttempt): View {
    return {
      id: a.id,
      object: this.names.undoObject,
      [this.names.parentField]: a.parentId,
      metadata: structuredClone(a.metadata),
      created: Math.floor(a.createdAtMs / 1000),
    };
  }

  private missing(id: string): Reply {
    return stripeError(404, { type: 'invalid_request_error', code: 'resource_missing', param: 'id', message: `No such ${this.names.noun}: '${id}'` });
  }
}
