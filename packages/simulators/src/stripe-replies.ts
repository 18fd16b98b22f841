import { json, type Reply } from './sim-http.js';

export type StripeErrorType = 'invalid_request_error' | 'idempotency_error' | 'api_error';

export interface StripeErrorFields {
  type: StripeErrorType;
  message: string;
  code?: string;
  param?: string;
}

export function stripeError(status: number, fields: StripeErrorFields): Reply {
  return json(status, { error: fields });
}

/** `Stripe-Should-Retry`, when the simulator is configured to send it. */
export function withRetryHint(reply: Reply, shouldRetry: boolean): Reply {
  return { ...reply, headers: { ...reply.headers, 'Stripe-Should-Retry': String(shouldRetry) } };
}

export function stripeFaultReply(status: number, body?: unknown): Reply {
  if (body !== undefined) return json(status, body);
  if (status === 429) {
    return stripeError(429, {
      type: 'invalid_request_error',
      code: 'rate_limit',
      message: 'Too many requests hit the API too quickly.',
    });
  }
  return stripeError(status, {
    type: 'api_error',
    message: 'An unknown error occurred while processing your request.',
  });
}
