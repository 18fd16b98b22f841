import { describe, expect, it } from 'vitest';
import { EffectdError } from '../../src/core/errors.js';
import { isLedgerUnreachable } from '../../src/ledger/ledger.port.js';
import { probeTimeouts } from '../../src/ledger/postgres-hosts.js';
import { poolTimeouts, unreachableError } from '../../src/ledger/postgres-timeouts.js';
import { saysNothingRecorded } from '../../src/shell/recorded-failure.js';

const t = { connectMs: 2_000, queryMs: 5_000 };
const pgError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

/** Issue 30: a PostgreSQL ledger that does not answer is called unreachable, and never answered as failed. */
describe('the PostgreSQL ledger\'s timeouts (postgres-timeouts.ts)', () => {
  it('the pool and the host probe get the connect, query and statement timeouts and keepalive', () => {
    expect(poolTimeouts(t)).toEqual({ connectionTimeoutMillis: 2_000, query_timeout: 5_000, statement_timeout: 5_000, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    expect(probeTimeouts(poolTimeouts(t))).toEqual({ connectionTimeoutMillis: 2_000, query_timeout: 5_000 });
    expect(probeTimeouts({})).toEqual({ connectionTimeoutMillis: 3_000, query_timeout: 3_000 });
  });

  it('a read that timed out: unreachable, nothing recorded, send the same command again', () => {
    const error = unreachableError(pgError('Query read timeout'), 'read', t) as EffectdError;
    expect(error.code).toBe('unavailable');
    expect(isLedgerUnreachable(error)).toBe(true);
    expect(error.message).toMatch(/^the PostgreSQL ledger is unreachable \(Query read timeout; connect timeout 2000 ms, query timeout 5000 ms\): nothing was recorded; send the same command again$/);
    expect(error.details).toMatchObject({ retryAfterMs: 2_000, ledger: 'unreachable' });
  });

  it('an append whose answer was lost: unknown, never failed; one that never left (connect timeout): nothing recorded', () => {
    const lost = unreachableError(pgError('Query read timeout'), 'append', t) as EffectdError;
    expect(lost.message).toMatch(/whether it was recorded is unknown \(not failed\); send the same command again/);
    expect(lost.message).not.toMatch(/nothing was recorded/);
    expect(lost.details).toMatchObject({ ledger: 'unreachable', writeFate: 'unknown' });
    const reset = unreachableError(pgError('Connection terminated unexpectedly'), 'append', t) as EffectdError;
    expect(reset.details['writeFate']).toBe('unknown');
    const neverSent = unreachableError(pgError('timeout exceeded when trying to connect'), 'append', t) as EffectdError;
    expect(neverSent.message).toMatch(/nothing was recorded; send the same command again$/);
    expect(neverSent.details['writeFate']).toBeUndefined();
    // The shell words a failure after a claim from what it knows (recorded-failure.ts), not from a second read of an unreachable ledger.
    expect(saysNothingRecorded(lost)).toBe(true);
  });

  it('the server\'s own answers pass unchanged; a statement cancelled by statement_timeout was rolled back', () => {
    const unique = pgError('duplicate key value violates unique constraint', '23505');
    expect(unreachableError(unique, 'append', t)).toBe(unique);
    const typeError = new TypeError('x is undefined');
    expect(unreachableError(typeError, 'read', t)).toBe(typeError);
    const cancelled = unreachableError(pgError('canceling statement due to statement timeout', '57014'), 'append', t) as EffectdError;
    expect(cancelled.message).toMatch(/rolled back\): nothing was recorded/);
    expect(isLedgerUnreachable(cancelled)).toBe(false);
    const coded = new EffectdError('unavailable', 'no PostgreSQL host takes writes');
    expect(unreachableError(coded, 'read', t)).toBe(coded);
  });
});
