import { describe, expect, it } from 'vitest';
import { GroupCommitLedger } from '../../src/ledger/group-commit-ledger.js';
import { KurrentDBLedger } from '../../src/ledger/kurrentdb-ledger.js';
import { ConcurrencyError, NO_STREAM } from '../../src/ledger/ledger.port.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { declared, started } from '../support/events.js';
import { FakeKurrentServer } from '../support/fake-kurrentdb-client.js';

/** A promise the test settles by hand, to hold an inner ledger call in flight. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** An in-memory SQLite ledger whose commits and batched reads wait for `held` and whose close is logged. */
function heldSqlite(held: Promise<void>, log: string[]) {
  const inner = new SqliteLedger(':memory:');
  const [appendMany, readStreams, close] = [inner.appendMany.bind(inner), inner.readStreams.bind(inner), inner.close.bind(inner)];
  inner.appendMany = async (requests) => {
    await held;
    log.push(`commit ${requests.length}`);
    return appendMany(requests);
  };
  inner.readStreams = async (reads) => {
    await held;
    log.push(`read ${reads.length}`);
    return readStreams(reads);
  };
  inner.close = async () => {
    log.push('inner closed');
    return close();
  };
  return inner;
}

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

  it('hands a lone append and a lone read to the inner ledger in the same tick, alone: nothing (no linger timer, no poll) stands between one effect and its commit', async () => {
    const inner = new SqliteLedger(':memory:');
    const calls: string[] = [];
    const [appendMany, readStreams] = [inner.appendMany.bind(inner), inner.readStreams.bind(inner)];
    inner.appendMany = (requests) => {
      calls.push(`commit ${requests.length}`);
      return appendMany(requests);
    };
    inner.readStreams = (reads) => {
      calls.push(`read ${reads.length}`);
      return readStreams(reads);
    };
    const ledger = new GroupCommitLedger(inner);
    const appended = ledger.append('s-1', [declared('e1')], NO_STREAM);
    expect(calls).toEqual(['commit 1']);
    expect(await appended).toEqual({ revision: 0, position: expect.any(Number) });
    const read = ledger.readStream('s-1');
    expect(calls).toEqual(['commit 1', 'read 1']);
    expect((await read).map((e) => e.event.type)).toEqual(['EffectDeclared']);
    await ledger.close();
  });

  it('close() waits for every queued and in-flight append and read, answers each, then closes the inner ledger', async () => {
    const held = gate();
    const log: string[] = [];
    const ledger = new GroupCommitLedger(heldSqlite(held.opened, log));
    const inFlight = ledger.append('a', [declared('e1')], NO_STREAM);
    const queued = [ledger.append('b', [declared('e2')], NO_STREAM), ledger.append('a', [started('e1', 1, 1_100)], 5)];
    const reads = [ledger.readStream('a'), ledger.readStream('b', NO_STREAM)];
    const closed = ledger.close();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(log).toEqual([]);
    held.open();
    await closed;
    expect(log.at(-1)).toBe('inner closed');
    expect(log.slice(0, -1).sort()).toEqual(['commit 1', 'commit 2', 'read 1', 'read 1']);
    expect(await inFlight).toEqual({ revision: 0, position: 1 });
    expect(await Promise.allSettled(queued)).toMatchObject([{ status: 'fulfilled' }, { status: 'rejected', reason: expect.any(ConcurrencyError) }]);
    expect(await Promise.allSettled(reads)).toMatchObject([{ status: 'fulfilled' }, { status: 'fulfilled' }]);
  });

  it('close() fails an in-flight append back to its caller when the commit fails, and still closes', async () => {
    const log: string[] = [];
    const ledger = new GroupCommitLedger(heldSqlite(Promise.reject(new Error('disk full')), log));
    const append = ledger.append('a', [declared('e1')], NO_STREAM).catch((error: Error) => log.push(`failed: ${error.message}`));
    await ledger.close();
    await append;
    expect(log).toEqual(['failed: disk full', 'inner closed']);
  });

  it('refuses every operation once close() has begun, with an error saying so; close() twice is one close', async () => {
    const log: string[] = [];
    const ledger = new GroupCommitLedger(heldSqlite(Promise.resolve(), log));
    const closed = ledger.close();
    const refused = /refused: the ledger is closing/;
    await expect(ledger.append('a', [declared('e1')], NO_STREAM)).rejects.toThrow(refused);
    await expect(ledger.appendMany([{ stream: 'a', events: [declared('e1')], expectedRevision: NO_STREAM }])).rejects.toThrow(refused);
    await expect(ledger.readStream('a')).rejects.toThrow(refused);
    await expect(ledger.readStreams([{ stream: 'a', afterRevision: 0 }])).rejects.toThrow(refused);
    await expect(ledger.readAll(0, 10)).rejects.toThrow(refused);
    await expect(ledger.locateEffect!('e1')).rejects.toThrow(refused);
    expect(ledger.close()).toBe(closed);
    await closed;
    expect(log).toEqual(['inner closed']);
  });

  it('close() waits for pass-through calls too (an inner ledger without appendMany or readStreams)', async () => {
    const server = new FakeKurrentServer();
    const inner = new KurrentDBLedger(server.client());
    const ledger = new GroupCommitLedger(inner);
    const log: string[] = [];
    const close = inner.close.bind(inner);
    inner.close = async () => {
      log.push('inner closed');
      return close();
    };
    const append = ledger.append('a', [declared('e1')], NO_STREAM).then((r) => log.push(`appended ${r.revision}`));
    const read = ledger.readStream('a').then((events) => log.push(`read ${events.length}`));
    await ledger.close();
    await Promise.all([append, read]);
    expect(log.at(-1)).toBe('inner closed');
    expect(log).toHaveLength(3);
  });

  it('offers locateEffect only when the inner ledger does', async () => {
    const sqlite = new GroupCommitLedger(new SqliteLedger(':memory:'));
    await sqlite.append('workflow-a', [declared('e1')], NO_STREAM);
    expect(await sqlite.locateEffect?.('e1')).toBe('workflow-a');
    const kurrent = new GroupCommitLedger(new KurrentDBLedger(new FakeKurrentServer().client()));
    expect('locateEffect' in kurrent).toBe(false);
    await Promise.all([sqlite.close(), kurrent.close()]);
  });

  it('appendMany without an inner appendMany appends in request order (a later request may depend on an earlier one)', async () => {
    const ledger = new GroupCommitLedger(new KurrentDBLedger(new FakeKurrentServer().client()));
    const results = await ledger.appendMany([
      { stream: 'a', events: [declared('e1')], expectedRevision: NO_STREAM },
      { stream: 'a', events: [started('e1', 1, 1_100)], expectedRevision: 0 },
      { stream: 'a', events: [started('e1', 2, 1_200)], expectedRevision: 0 },
    ]);
    expect(results.map((r) => (r instanceof ConcurrencyError ? 'conflict' : r.revision))).toEqual([0, 1, 'conflict']);
    await ledger.close();
  });
});
