import { fingerprint } from './canonical.js';
import { IdempotencyStore } from './idempotency-store.js';
import type { Parsed } from './payments-params.js';
import { headerValue, type Call, type Execution, type Reply } from './sim-http.js';
import type { SimClock } from './sim-clock.js';
import { stripeError, stripeFaultReply, type StripeErrorType } from './stripe-replies.js';

/**
 * Which of Stripe's idempotency behaviours the layer follows (PROVIDERS.md 1a and 1b):
 * - `v1`: the first response is frozen once execution began, a 500 included, and replayed as is.
 * - `v2`: a same-key retry of a request whose execution failed (a 5xx, or an execution that
 *   crashed) executes it again; a succeeded one is replayed with the object as it is now.
 */
export type StripeApiVersion = 'v1' | 'v2';

export interface StripeIdempotencyOptions {
  retentionMs: number;
  /** Default `v1`. */
  apiVersion?: StripeApiVersion;
  /** v2 only: the object a replayed success shows now (Stripe v2 returns an updated response, not a byte-identical one). */
  refresh?: (stored: Reply) => Reply;
  /** PROVIDERS.md: the `type` of the 409 idempotency_key_in_use error is UNCONFIRMED. */
  inUseErrorType: StripeErrorType;
  /** PROVIDERS.md: the `code` of the parameter-mismatch error is UNCONFIRMED; absent by default. */
  mismatchErrorCode: string | undefined;
  /** Adds `Stripe-Should-Retry` to the replies this layer decides. */
  retryHint: (reply: Reply, shouldRetry: boolean) => Reply;
}

const MAX_KEY_LENGTH = 255;

/**
 * Stripe v1 idempotency: the first response is frozen once execution began, whatever its status,
 * and replayed with `Idempotent-Replayed: true`. Nothing is stored for validation errors, for a
 * concurrent duplicate (409) or for anything refused before execution (429).
 *
 * Stripe v2 (`apiVersion: 'v2'`) keeps all of that except what a failure leaves: a retry with the
 * same key and parameters after a 5xx (or an execution that threw) is executed again, under the
 * same key and its first-use time, instead of replaying the failure. A stored success is still
 * replayed with `Idempotent-Replayed: true` (PROVIDERS.md documents no v2 marker), showing the
 * object as it is now; a 4xx that execution produced (no such charge, already refunded) is the
 * provider's answer, not a failure, and is replayed as in v1.
 */
export class StripeIdempotencyLayer {
  private readonly store: IdempotencyStore<Reply>;

  constructor(
    clock: SimClock,
    private readonly options: StripeIdempotencyOptions,
  ) {
    this.store = new IdempotencyStore<Reply>(clock, options.retentionMs);
  }

  clear(): void {
    this.store.clear();
  }

  handle<P>(
    call: Call,
    validate: (body: unknown) => Parsed<P>,
    execute: (params: P, key: string | null) => Reply,
  ): Reply | Execution {
    const hint = this.options.retryHint;
    // An empty header is treated as no key (PROVIDERS.md is silent).
    const key = headerValue(call.headers, 'idempotency-key') || null;
    if (key !== null && key.length > MAX_KEY_LENGTH) {
      return hint(
        stripeError(400, {
          type: 'invalid_request_error',
          message: `Invalid Idempotency-Key: it must be at most ${MAX_KEY_LENGTH} characters long; yours has ${key.length}.`,
        }),
        false,
      );
    }
    const digest = fingerprint(call.body, true);
    let firstUsedAt: number | undefined;
    if (key !== null) {
      const earlier = this.earlierRequest(key, digest, call.path);
      if (earlier !== undefined && 'executeAgain' in earlier) firstUsedAt = earlier.executeAgain;
      else if (earlier !== undefined) return earlier;
    }
    const parsed = validate(call.body);
    if (!parsed.ok) {
      return hint(stripeError(400, { type: 'invalid_request_error', message: parsed.message, param: parsed.param }), false);
    }
    if (key === null) {
      return { commit: () => execute(parsed.value, null), fail: (reply) => reply };
    }
    this.store.claim(key, digest, call.path, firstUsedAt);
    const settle = (reply: Reply): Reply => {
      this.store.complete(key, structuredClone(reply));
      return reply;
    };
    if (this.version !== 'v2') return { commit: () => settle(execute(parsed.value, key)), fail: settle };
    return {
      commit: () => {
        let reply: Reply;
        try {
          reply = execute(parsed.value, key);
        } catch (error) {
          // A crashed execution is a failure like a 500: the next same-key retry executes again.
          settle(stripeFaultReply(500));
          throw error;
        }
        return settle(reply);
      },
      fail: settle,
    };
  }

  private get version(): StripeApiVersion {
    return this.options.apiVersion ?? 'v1';
  }

  /** The answer to a key seen before, `executeAgain` (v2: its execution failed; keep its first-use time), or undefined for a new key. */
  private earlierRequest(key: string, digest: string, path: string): Reply | { executeAgain: number } | undefined {
    const hint = this.options.retryHint;
    const record = this.store.get(key);
    if (record === undefined) return undefined;
    if (record.state === 'in-flight') {
      return hint(
        stripeError(409, {
          type: this.options.inUseErrorType,
          code: 'idempotency_key_in_use',
          message: `There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): ${key}. Please try again later.`,
        }),
        true,
      );
    }
    if (record.path !== path) {
      return hint(
        stripeError(400, {
          type: 'idempotency_error',
          message: `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${record.path}' vs '${path}'). Try using a key other than '${key}' if you meant to execute a different request.`,
        }),
        false,
      );
    }
    if (record.fingerprint !== digest) {
      return hint(
        stripeError(400, {
          type: 'idempotency_error',
          ...(this.options.mismatchErrorCode === undefined ? {} : { code: this.options.mismatchErrorCode }),
          message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
        }),
        false,
      );
    }
    if (this.version === 'v2' && record.result.status >= 500) return { executeAgain: record.firstUsedAt };
    let stored = structuredClone(record.result);
    if (this.version === 'v2' && this.options.refresh) stored = this.options.refresh(stored);
    return hint({ ...stored, headers: { ...stored.headers, 'Idempotent-Replayed': 'true' }, replayed: true }, false);
  }
}
