import type { IdSource } from './ids.js';
import { parseChargeParams, parseRefundParams, type ChargeParams, type RefundParams } from './payments-params.js';
import { json, type Call, type Reply, type Route, type SimProvider } from './sim-http.js';
import type { SimClock } from './sim-clock.js';
import { StripeIdempotencyLayer, type StripeApiVersion } from './stripe-idempotency.js';
import { stripeError, stripeFaultReply, withRetryHint, type StripeErrorType } from './stripe-replies.js';
import { parseSearchQuery } from './stripe-search.js';

export interface PaymentsOptions {
  /**
   * Stripe's idempotency profile (PROVIDERS.md 1a/1b): `v1` (default) freezes the first response,
   * a 500 included; `v2` executes a failed request again on a same-key retry and keeps keys 30 days.
   * The endpoints stay `/v1/charges` and `/v1/refunds` either way (Stripe serves charges on v1 only).
   */
  apiVersion?: StripeApiVersion;
  /** Idempotency-key retention on the SimClock (Stripe v1: at least 24 h, the default; v2: 30 days, the default). */
  retentionMs?: number;
  /** How long (SimClock) before a new charge or refund is visible to search. */
  searchLagMs?: number;
  /** Send `Stripe-Should-Retry` on errors and replays. */
  stripeShouldRetry?: boolean;
  /** `type` of the 409 idempotency_key_in_use error (UNCONFIRMED in PROVIDERS.md). */
  inUseErrorType?: StripeErrorType;
  /** `code` of the parameter-mismatch idempotency_error (UNCONFIRMED; none by default). */
  mismatchErrorCode?: string;
}

interface Charge {
  id: string;
  object: 'charge';
  amount: number;
  amount_refunded: number;
  currency: string;
  description: string | null;
  metadata: Record<string, string>;
  created: number;
  status: 'succeeded';
  refunded: boolean;
  livemode: false;
}

interface Refund {
  id: string;
  object: 'refund';
  charge: string;
  amount: number;
  currency: string;
  reason: string | null;
  metadata: Record<string, string>;
  created: number;
  status: 'succeeded';
}

/** What the oracle adds to each object: the key it was created under and exact SimClock time. */
interface Provenance {
  idempotencyKey: string | null;
  createdAtMs: number;
}

type Stored<T> = { object: T } & Provenance;

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_MS: Record<StripeApiVersion, number> = { v1: DAY_MS, v2: 30 * DAY_MS };

/** Stripe charges and refunds, with v1 (default) or v2 idempotency semantics. */
export class PaymentsSimulator implements SimProvider {
  readonly routes: readonly Route[];
  private charges = new Map<string, Stored<Charge>>();
  private refunds = new Map<string, Stored<Refund>>();
  /** Refund executions refused (no such charge, already refunded): the oracle keeps them, as travel keeps refused undos. */
  private refundRefusals: { charge: string; code: string; idempotencyKey: string | null; createdAtMs: number }[] = [];
  private readonly keys: StripeIdempotencyLayer;
  private readonly searchLagMs: number;
  private readonly shouldRetryHeader: boolean;

  constructor(
    private readonly clock: SimClock,
    private readonly ids: IdSource,
    options: PaymentsOptions = {},
  ) {
    this.searchLagMs = options.searchLagMs ?? 1000;
    this.shouldRetryHeader = options.stripeShouldRetry ?? false;
    const apiVersion = options.apiVersion ?? 'v1';
    this.keys = new StripeIdempotencyLayer(clock, {
      apiVersion,
      retentionMs: options.retentionMs ?? RETENTION_MS[apiVersion],
      refresh: (stored) => this.current(stored),
      inUseErrorType: options.inUseErrorType ?? 'invalid_request_error',
      mismatchErrorCode: options.mismatchErrorCode,
      retryHint: (reply, retry) => this.hint(reply, retry),
    });
    this.routes = [
      { method: 'POST', pattern: '/v1/charges', write: (call) => this.keys.handle(call, parseChargeParams, (p, k) => this.createCharge(p, k)) },
      { method: 'GET', pattern: '/v1/charges', read: () => this.list('/v1/charges', this.charges) },
      { method: 'GET', pattern: '/v1/charges/search', read: (call) => this.search(call, '/v1/charges/search', this.charges) },
      { method: 'GET', pattern: '/v1/charges/:id', read: (call) => this.retrieve(this.charges, 'charge', call.params.id) },
      { method: 'POST', pattern: '/v1/refunds', write: (call) => this.keys.handle(call, parseRefundParams, (p, k) => this.createRefund(p, k)) },
      { method: 'GET', pattern: '/v1/refunds/search', read: (call) => this.search(call, '/v1/refunds/search', this.refunds) },
      { method: 'GET', pattern: '/v1/refunds/:id', read: (call) => this.retrieve(this.refunds, 'refund', call.params.id) },
    ];
  }

  oracle(): { charges: (Charge & Provenance)[]; refunds: (Refund & Provenance)[]; refundRefusals: { charge: string; code: string; idempotencyKey: string | null; createdAtMs: number }[] } {
    const flatten = <T>({ object, ...provenance }: Stored<T>): T & Provenance => ({ ...structuredClone(object), ...provenance });
    return { charges: [...this.charges.values()].map(flatten), refunds: [...this.refunds.values()].map(flatten), refundRefusals: structuredClone(this.refundRefusals) };
  }

  reset(): void {
    this.charges = new Map();
    this.refunds = new Map();
    this.refundRefusals = [];
    this.keys.clear();
  }

  faultReply(status: number, body?: unknown): Reply {
    const reply = stripeFaultReply(status, body);
    return status === 429 || status >= 500 ? this.hint(reply, true) : reply;
  }

  malformedBody(message: string): Reply {
    return this.hint(stripeError(400, { type: 'invalid_request_error', message: `Invalid request body: ${message}` }), false);
  }

  notFound(method: string, path: string): Reply {
    return stripeError(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` });
  }

  /** A stored success as it reads now (v2 replays): the charge or refund it created, refunds included. */
  private current(stored: Reply): Reply {
    const body = stored.body as { id?: unknown; object?: unknown } | undefined;
    const records: Map<string, Stored<unknown>> | undefined = body?.object === 'charge' ? this.charges : body?.object === 'refund' ? this.refunds : undefined;
    const now = typeof body?.id === 'string' ? records?.get(body.id) : undefined;
    return now === undefined ? stored : { ...stored, body: structuredClone(now.object) };
  }

  private hint(reply: Reply, shouldRetry: boolean): Reply {
    return this.shouldRetryHeader ? withRetryHint(reply, shouldRetry) : reply;
  }

  private createCharge(params: ChargeParams, idempotencyKey: string | null): Reply {
    const createdAtMs = this.clock.now();
    const charge: Charge = {
      id: this.ids.next('ch'),
      object: 'charge',
      amount: params.amount,
      amount_refunded: 0,
      currency: params.currency,
      description: params.description,
      metadata: params.metadata,
      created: Math.floor(createdAtMs / 1000),
      status: 'succeeded',
      refunded: false,
      livemode: false,
    };
    this.charges.set(charge.id, { object: charge, idempotencyKey, createdAtMs });
    return json(200, structuredClone(charge));
  }

  /** Existence and refundability are checked at execution, so their errors are frozen under the key too. */
  private createRefund(params: RefundParams, idempotencyKey: string | null): Reply {
    const stored = this.charges.get(params.charge);
    if (stored === undefined) {
      this.refundRefusals.push({ charge: params.charge, code: 'resource_missing', idempotencyKey, createdAtMs: this.clock.now() });
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        param: 'charge',
        message: `No such charge: '${params.charge}'`,
      });
    }
    const charge = stored.object;
    const refundable = charge.amount - charge.amount_refunded;
    if (refundable === 0) {
      this.refundRefusals.push({ charge: charge.id, code: 'charge_already_refunded', idempotencyKey, createdAtMs: this.clock.now() });
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'charge_already_refunded',
        message: `Charge ${charge.id} has already been refunded.`,
      });
    }
    const amount = params.amount ?? refundable;
    if (amount > refundable) {
      return stripeError(400, {
        type: 'invalid_request_error',
        code: 'amount_too_large',
        param: 'amount',
        message: `Refund amount (${amount}) is greater than unrefunded amount on charge (${refundable}).`,
      });
    }
    const createdAtMs = this.clock.now();
    const refund: Refund = {
      id: this.ids.next('re'),
      object: 'refund',
      charge: charge.id,
      amount,
      currency: charge.currency,
      reason: params.reason,
      metadata: params.metadata,
      created: Math.floor(createdAtMs / 1000),
      status: 'succeeded',
    };
    this.refunds.set(refund.id, { object: refund, idempotencyKey, createdAtMs });
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded === charge.amount;
    return json(200, structuredClone(refund));
  }

  private retrieve<T>(records: Map<string, Stored<T>>, noun: string, id: string): Reply {
    const stored = records.get(id);
    if (stored !== undefined) return json(200, structuredClone(stored.object));
    return stripeError(404, { type: 'invalid_request_error', code: 'resource_missing', param: 'id', message: `No such ${noun}: '${id}'` });
  }

  /** The list endpoint is read-after-write consistent, unlike search. */
  private list<T>(url: string, records: Map<string, Stored<T>>): Reply {
    return json(200, { object: 'list', url, has_more: false, data: newestFirst([...records.values()]) });
  }

  private search<T>(call: Call, url: string, records: Map<string, Stored<T>>): Reply {
    const predicate = parseSearchQuery(call.query.get('query') ?? '');
    if (typeof predicate === 'string') {
      return stripeError(400, { type: 'invalid_request_error', param: 'query', message: predicate });
    }
    const indexedBefore = this.clock.now() - this.searchLagMs;
    const visible = [...records.values()].filter(
      (s) => s.createdAtMs <= indexedBefore && predicate(s.object as Record<string, unknown>),
    );
    return json(200, { object: 'search_result', url, has_more: false, next_page: null, data: newestFirst(visible) });
  }
}

function newestFirst<T>(records: Stored<T>[]): T[] {
  return [...records].reverse().sort((a, b) => b.createdAtMs - a.createdAtMs).map((s) => structuredClone(s.object));
}
