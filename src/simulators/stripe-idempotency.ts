import { fingerprint } from './canonical.js';
import { IdempotencyStore } from './idempotency-store.js';
import type { Parsed } from './payments-params.js';
import { headerValue, type Call, type Execution, type Reply } from './sim-http.js';
import type { SimClock } from './sim-clock.js';
import { stripeError, type StripeErrorType } from './stripe-replies.js';

export interface StripeIdempotencyOptions {
  retentionMs: number;
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
    if (key !== null) {
      const earlier = this.earlierRequest(key, digest, call.path);
      if (earlier !== undefined) return earlier;
    }
    const parsed = validate(call.body);
    if (!parsed.ok) {
      return hint(stripeError(400, { type: 'invalid_request_error', message: parsed.message, param: parsed.param }), false);
    }
    if (key === null) {
      return { commit: () => execute(parsed.value, null), fail: (reply) => reply };
    }
    this.store.claim(key, digest, call.path);
    const settle = (reply: Reply): Reply => {
      this.store.complete(key, structuredClone(reply));
      return reply;
    };
    return { commit: () => settle(execute(parsed.value, key)), fail: settle };
  }

  private earlierRequest(key: string, digest: string, path: string): Reply | undefined {
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
    const stored = structuredClone(record.result);
    return hint({ ...stored, headers: { ...stored.headers, 'Idempotent-Replayed': 'true' }, replayed: true }, false);
  }
}
