import { describe, expect, it } from 'vitest';
import { EffectdError } from '../../src/core/errors.js';
import { GroupCommitLedger } from '../../src/ledger/group-commit-ledger.js';
import { isLedgerUnreachable, NO_STREAM, UNREACHABLE } from '../../src/ledger/ledger.port.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { declared } from '../support/events.js';

/**
 * Issue 30: behind a batch that found the ledger unreachable, the operations queued during it are
 * answered at once (not sent, nothing recorded) instead of each waiting out another timeout, and so
 * are those that arrive in the next moment; then the ledger is tried again.
 */
describe('GroupCommitLedger when the ledger is unreachable', () => {
  it('answers what queued behind the failed batch at once, holds new operations back briefly, then tries again', async () => {
    const inner = new SqliteLedger(':memory:');
    let release!: () => void;
    let down = true;
    let commits = 0;
    const appendMany = inner.appendMany.bind(inner);
    inner.appendMany = async (requests) => {
      commits++;
      if (down) {
        await new Promise<void>((resolve) => (release = resolve));
        throw new EffectdError('unavailable', 'the PostgreSQL ledger is unreachable (Query read timeout): whether it was recorded is unknown (not failed)', { ledger: UNREACHABLE, writeFate: 'unknown', retryAfterMs: 2_000 });
      }
      return appendMany(requests);
    };
    const ledger = new GroupCommitLedger(inner);
    const first = ledger.append('wf-1', [declared('e1')], NO_STREAM).catch((error: unknown) => error);
    const queued = ledger.append('wf-2', [declared('e2')], NO_STREAM).catch((error: unknown) => error);
    release();
    const [a, b] = await Promise.all([first, queued]);
    expect((a as EffectdError).details['writeFate']).toBe('unknown'); // sent: its fate is unknown
    expect(isLedgerUnreachable(b)).toBe(true);
    expect((b as EffectdError).message).toMatch(/this one was not sent\): nothing was recorded; send the same command again$/);
    expect((b as EffectdError).details).toMatchObject({ retryAfterMs: 2_000 });
    expect(commits).toBe(1);
    // Within the hold: answered at once, without a commit.
    await expect(ledger.append('wf-3', [declared('e3')], NO_STREAM)).rejects.toThrow(/this one was not sent/);
    await expect(ledger.readStream('wf-3')).rejects.toThrow(/this one was not sent/);
    expect(commits).toBe(1);
    // After it, the ledger is asked again.
    down = false;
    await new Promise((r) => setTimeout(r, 1_050));
    await expect(ledger.append('wf-3', [declared('e3')], NO_STREAM)).resolves.toMatchObject({ revision: 0 });
    expect(commits).toBe(2);
    await ledger.close();
  });
});
