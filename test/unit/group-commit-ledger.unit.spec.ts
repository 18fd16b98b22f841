import { describe, expect, it } from 'vitest';
import { GroupCommitLedger } from '../../src/ledger/group-commit-ledger.js';
import { ConcurrencyError, NO_STREAM } from '../../src/ledger/ledger.port.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { declared, started } from '../support/events.js';

describe('GroupCommitLedger', () => {
  it('coalesces concurrent appends into few commits and answers each like its own append', async () => {
    const inner = new SqliteLedger(':memory:');
    let commits = 0;
    const appendMany = inner.appendMany.bind(inner);
    inner.appendMany = async (requests) => {
      commits++;
      return appendMany(requests);
    };
    const ledger = new GroupCommitLedger(inner);
    const results = await Promise.allSettled([
      ...Array.from({ length: 50 }, (_, i) => ledger.append(`s-${i}`, [declared(`e${i}`)], NO_STREAM)),
      ledger.append('s-0', [started('e0', 1, 1_100)], 7),
    ]);
    expect(results.slice(0, 50).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(results[50]).toMatchObject({ status: 'rejected', reason: expect.any(ConcurrencyError) });
    expect(commits).toBeLessThanOrEqual(2);
    expect((await ledger.readStream('s-7')).map((e) => e.event.type)).toEqual(['EffectDeclared']);
    await ledger.close();
  });
});
