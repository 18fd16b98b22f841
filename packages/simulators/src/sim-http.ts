import type { IncomingHttpHeaders } from 'node:http';

/** What a simulated provider answers. `replayed` marks a response served from an idempotency store. */
export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  replayed?: boolean;
}

/** One parsed request as a provider sees it. */
export interface Call {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * A write that has passed every pre-execution check and holds its idempotency claim (if any).
 * Exactly one of `commit` or `fail` is called, possibly much later (delay, late commit), or neither
 * when the simulator is reset in between — except for a `status` fault with `afterCommit`, which
 * calls `commit` and then `fail`: the mutation stays, and `fail` stores the injected reply where
 * the provider stores failures under the key.
 */
export interface Execution {
  /** Performs the mutation, stores the response under the key, releases the claim. */
  commit(): Reply;
  /** Execution began but produced `reply` instead (an injected error); nothing is mutated. */
  fail(reply: Reply): Reply;
}

/** Reads are computed when answered; writes decide up front whether they execute. */
export type Route =
  | { method: 'GET'; pattern: string; read: (call: Call) => Reply }
  | { method: 'POST'; pattern: string; write: (call: Call) => Reply | Execution };

export interface SimProvider {
  readonly routes: readonly Route[];
  /** The external state: the effects that really happened. */
  oracle(): unknown;
  reset(): void;
  /** The provider's own error body for an injected status, e.g. a 429 or 500. */
  faultReply(status: number, body?: unknown): Reply;
  malformedBody(message: string): Reply;
  notFound(method: string, path: string): Reply;
  close?(): void;
}

export function isExecution(value: Reply | Execution): value is Execution {
  return typeof (value as Execution).commit === 'function';
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, body, headers };
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Matches `/v1/charges/:id` against a path; returns the named segments or undefined. */
export function matchPattern(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) {
      if (got[i] === '') return undefined;
      try {
        params[want[i].slice(1)] = decodeURIComponent(got[i]);
      } catch {
        return undefined;
      }
    } else if (want[i] !== got[i]) {
      return undefined;
    }
  }
  return params;
}
