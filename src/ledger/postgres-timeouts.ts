import { EffectdError, isEffectdError, NOTHING_RECORDED } from '../core/errors.js';
import { UNREACHABLE } from './ledger.port.js';

/**
 * How long the PostgreSQL ledger waits before it calls the server unreachable
 * (EFFECTD_LEDGER_CONNECT_TIMEOUT_MS, EFFECTD_LEDGER_QUERY_TIMEOUT_MS). Without them a request to a
 * host whose packets are dropped waits on TCP for minutes (issue 30: every POST to an instance cut
 * from PostgreSQL ran into its caller's 8 s timeout).
 */
export interface PostgresTimeouts {
  /** A new connection (TCP and the startup handshake), and a wait for a free connection of the pool. */
  connectMs: number;
  /** One statement, from sending it to its last row; the server cancels it too (statement_timeout). */
  queryMs: number;
}

/**
 * Connect 2 s: a connection on a LAN takes milliseconds, and a pool that has no free connection for
 * 2 s is already past what a caller waits. Query 5 s: the slowest statement effectd sends is a group
 * commit of a few hundred rows (tens of ms); 5 s plus a connect stays under an agent's usual 8–10 s
 * timeout, so the caller hears 503 instead of timing out.
 */
export const DEFAULT_POSTGRES_TIMEOUTS: PostgresTimeouts = { connectMs: 2_000, queryMs: 5_000 };

/** TCP keepalive probes start after this much silence, so a connection whose peer vanished is found. */
const KEEPALIVE_AFTER_MS = 10_000;

/** The pg.Pool/pg.Client settings of these timeouts. */
export function poolTimeouts(t: PostgresTimeouts) {
  return {
    connectionTimeoutMillis: t.connectMs,
    query_timeout: t.queryMs,
    statement_timeout: t.queryMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
  };
}

/** SQLSTATE 57014: the server cancelled the statement (statement_timeout); its transaction was rolled back. */
const QUERY_CANCELED = '57014';

/** Failures before a statement left this process: nothing was sent, so nothing can have been written. */
const BEFORE_SENDING = /when trying to connect|connection timeout|timeout expired|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN/i;

/** Failures of the connection itself (no SQLSTATE): a timeout, a reset, a closed socket. */
function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return false; // the server answered with an error
  return /timeout|terminated|ECONN|EHOSTUNREACH|ENETUNREACH|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|Connection|socket/i.test(`${error.message} ${String(code ?? '')}`);
}

/**
 * The coded error for a failed call to the ledger, or the error unchanged when it is not about
 * reaching the server (a constraint, a defect). A read: nothing was decided, the same command again
 * is safe. An append that may have reached the server (its answer is what was lost) is `unknown`,
 * never failed: whether it was recorded is not known, and the same command again is answered from
 * what the ledger holds (an effect is never done twice), so that is what the caller is told.
 */
export function unreachableError(error: unknown, call: 'read' | 'append', t: PostgresTimeouts): unknown {
  if (isEffectdError(error)) return error;
  const cause = error instanceof Error ? error.message : String(error);
  const retryAfterMs = Math.max(1_000, t.connectMs);
  if ((error as { code?: unknown } | undefined)?.code === QUERY_CANCELED) {
    return new EffectdError('unavailable', `the PostgreSQL ledger did not finish a statement within ${t.queryMs} ms (statement_timeout; it was rolled back): ${NOTHING_RECORDED}`, { retryAfterMs, ledger: 'slow' }, { cause: error });
  }
  if (!isConnectionFailure(error)) return error;
  const unreachable = `the PostgreSQL ledger is unreachable (${cause}; connect timeout ${t.connectMs} ms, query timeout ${t.queryMs} ms)`;
  if (call === 'read' || BEFORE_SENDING.test(cause)) {
    return new EffectdError('unavailable', `${unreachable}: ${NOTHING_RECORDED}`, { retryAfterMs, ledger: UNREACHABLE }, { cause: error });
  }
  return new EffectdError('unavailable', `${unreachable} while a write was on its way: whether it was recorded is unknown (not failed); send the same command again — it is answered from what the ledger holds and never done twice`, { retryAfterMs, ledger: UNREACHABLE, writeFate: 'unknown' }, { cause: error });
}
