import { START, UnavailableError } from '@kurrent/kurrentdb-client';
import { describe, expect, it } from 'vitest';
import { KurrentDBLedger } from '../../src/ledger/kurrentdb-ledger.js';
import { AppendTooLargeError, LedgerDataError } from '../../src/ledger/kurrentdb-mapping.js';
import { ConcurrencyError, NO_STREAM, type Ledger } from '../../src/ledger/ledger.port.js';
import { KURRENTDB_CAPABILITIES, ledgerContract } from '../contract/ledger.contract.js';
import { FakeKurrentServer } from '../support/fake-kurrentdb-client.js';
import { declared, finished, started } from '../support/events.js';

/**
 * The KurrentDB adapter's own logic (expected revisions, error mapping, exclusive `$all` reads,
 * paging, the bad-position fallback, filtering, append positions) run against an in-memory fake of
 * the client. This is NOT the server contract: that is test/contract/ledger.kurrentdb.int.spec.ts,
 * skipped unless EFFECTD_KURRENTDB_URL points at a server.
 */
const servers = new WeakMap<Ledger, FakeKurrentServer>();
const open = (server = new FakeKurrentServer(), namespace = 'effectd') => {
  const ledger = new KurrentDBLedger(server.client(), namespace, undefined, 'test/1');
  servers.set(ledger, server);
  return ledger;
};

ledgerContract('kurrentdb on a fake client (no server)', () => ({
  capabilities: KURRENTDB_CAPABILITIES,
  async open() {
    return open();
  },
  async openSecond(first) {
    return open(servers.get(first));
  },
  async dispose(ledger) {
    await ledger.close();
  },
}));

describe('KurrentDB ledger adapter (fake client)', () => {
  it('writes namespaced streams, namespaced types and metadata, and expects the right revision', async () => {
    const server = new FakeKurrentServer();
    const ledger = open(server);
    await ledger.append('workflow-acme-wf%201', [declared('e1')], NO_STREAM);
    await ledger.append('workflow-acme-wf%201', [started('e1', 1, 1_100)], 0);
    expect(server.log.map((r) => [r.streamId, r.type, r.revision])).toEqual([
      ['effectd-workflow-acme-wf%201', 'effectd.EffectDeclared', 0n],
      ['effectd-workflow-acme-wf%201', 'effectd.AttemptStarted', 1n],
    ]);
    expect(server.log[0]!.metadata).toEqual({ producer: 'effectd', encoding: 1, schemaVersion: 1, instance: 'test/1' });
    expect(server.log[0]!.data).not.toHaveProperty('type');
  });

  it('reads a stream on after a revision by asking the server from the next one, not by reading it all', async () => {
    const server = new FakeKurrentServer();
    const ledger = open(server);
    await ledger.append('s', [declared('e1'), started('e1', 1, 1_100), finished('e1', 1, 1_200, 'unknown')], NO_STREAM);
    server.readStreamFrom.length = 0;
    expect((await ledger.readStream('s', 1)).map((e) => e.revision)).toEqual([2]);
    expect(await ledger.readStream('s', 2)).toEqual([]);
    expect(await ledger.readStream('missing', 4)).toEqual([]);
    expect(server.readStreamFrom).toEqual([2n, 3n, 5n]);
  });

  it('maps the server refusing the expected revision to ConcurrencyError, for NO_STREAM and for numbers', async () => {
    const ledger = open();
    await ledger.append('s', [declared('e1')], NO_STREAM);
    await expect(ledger.append('s', [declared('e1')], NO_STREAM)).rejects.toBeInstanceOf(ConcurrencyError);
    await expect(ledger.append('s', [started('e1', 1, 1_100)], 3)).rejects.toBeInstanceOf(ConcurrencyError);
    await expect(ledger.append('s', [started('e1', 1, 1_100)], -2)).rejects.toThrow(/invalid expected revision/);
  });

  it('reports the last event\'s own position for a batch (read back), and the event\'s for a single append', async () => {
    const server = new FakeKurrentServer();
    const ledger = open(server);
    const one = await ledger.append('s', [declared('e1')], NO_STREAM);
    expect(one).toEqual({ revision: 0, position: Number(server.log[0]!.position.commit) });
    const batch = await ledger.append('s', [started('e1', 1, 1_100), finished('e1', 1, 1_200, 'unknown')], 0);
    expect(batch).toEqual({ revision: 2, position: Number(server.log[2]!.position.commit) });
    expect(await ledger.readAll(batch.position, 10)).toEqual([]);
  });

  it('refuses an oversized batch before sending it, and maps the server\'s own refusal the same way', async () => {
    const server = new FakeKurrentServer();
    const ledger = new KurrentDBLedger(server.client(), 'effectd', 64 * 1024);
    const blob = (n: number) => declared('e1', 1_000, { args: { blob: 'x'.repeat(n) } });
    await expect(ledger.append('s', [blob(40_000), blob(40_000)], NO_STREAM)).rejects.toBeInstanceOf(AppendTooLargeError);
    expect(server.appendCalls).toBe(0);
    const trusting = new KurrentDBLedger(server.client(), 'effectd', 8 * 1024 * 1024);
    server.maxAppendSize = 1024;
    await expect(trusting.append('s', [blob(2_000)], NO_STREAM)).rejects.toSatisfy((e) => e instanceof AppendTooLargeError && e.limit === 1024);
    expect(await ledger.readStream('s')).toEqual([]);
  });

  it('reads $all exclusively: from an event\'s position in one server read, from a non-boundary position by a scan from the start', async () => {
    const server = new FakeKurrentServer();
    const ledger = open(server);
    const a = await ledger.append('a', [declared('e1')], NO_STREAM);
    const b = await ledger.append('b', [declared('e2')], NO_STREAM);
    await ledger.append('a', [started('e1', 1, 1_100)], 0);

    server.readAllFrom.length = 0;
    const afterA = await ledger.readAll(a.position, 100);
    expect(afterA.map((e) => e.stream)).toEqual(['b', 'a']);
    expect(server.readAllFrom).toEqual([{ commit: BigInt(a.position), prepare: BigInt(a.position) }]);

    server.readAllFrom.length = 0;
    const fromInside = await ledger.readAll(b.position - 1, 100);
    expect(fromInside.map((e) => e.stream)).toEqual(['b', 'a']);
    expect(server.readAllFrom).toEqual([{ commit: BigInt(b.position - 1), prepare: BigInt(b.position - 1) }, START]);

    expect((await ledger.readAll(0, 100)).map((e) => e.position)).toEqual([a.position, b.position, afterA[1]!.position]);
  });

  it('does not turn a connectivity failure into a scan from the start', async () => {
    const server = new FakeKurrentServer();
    const ledger = open(server);
    const a = await ledger.append('a', [declared('e1')], NO_STREAM);
    server.failNextReadAll = new UnavailableError(undefined, 'connection refused');
    server.readAllFrom.length = 0;
    await expect(ledger.readAll(a.position, 10)).rejects.toBeInstanceOf(UnavailableError);
    expect(server.readAllFrom).toHaveLength(1);
  });

  it('pages through $all until it has `limit` events, each page starting at a known event', async () => {
    const server = new FakeKurrentServer();
    const ledger = open(server);
    for (let i = 0; i < 25; i++) await ledger.append(`s${i}`, [declared(`e${i}`)], NO_STREAM);
    const all = await ledger.readAll(0, 100);
    expect(all).toHaveLength(25);
    const pages: number[][] = [];
    for (let from = 0, page; (page = await ledger.readAll(from, 4)).length > 0; from = page[page.length - 1]!.position) pages.push(page.map((e) => e.position));
    expect(pages.flat()).toEqual(all.map((e) => e.position));
    expect(pages.every((p) => p.length <= 4)).toBe(true);
  });

  it('keeps other namespaces, other applications and system events out of readAll even if the server ignored the filter', async () => {
    const server = new FakeKurrentServer();
    server.ignoreFilter = true;
    const mine = open(server);
    const theirs = open(server, 'effectdtest_other');
    server.write('$stats-127.0.0.1:2113', '$statsCollected', { cpu: 1 });
    await theirs.append('x', [declared('t1')], NO_STREAM);
    server.write('orders-1', 'OrderPlaced', { id: 1 });
    await mine.append('workflow-a-b', [declared('e1')], NO_STREAM);
    server.write('$$effectd-workflow-a-b', '$metadata', { $maxAge: 10 });
    server.write('effectd-workflow-a-b', '$streamDeleted', {});
    expect((await mine.readAll(0, 100)).map((e) => [e.stream, (e.event as { effectId?: string }).effectId])).toEqual([['workflow-a-b', 'e1']]);
    expect((await theirs.readAll(0, 100)).map((e) => [e.stream, (e.event as { effectId?: string }).effectId])).toEqual([['x', 't1']]);
  });

  it('refuses, never skips, an event in its namespace that effectd did not write', async () => {
    const server = new FakeKurrentServer();
    const ledger = open(server);
    await ledger.append('w', [declared('e1')], NO_STREAM);
    server.write('effectd-w', 'SomethingElse', { hello: 'world' });
    await expect(ledger.readStream('w')).rejects.toBeInstanceOf(LedgerDataError);
    await expect(ledger.readAll(0, 10)).rejects.toThrow(/did not write/);
  });

  it('refuses positions past 2^53-1 with a clear error instead of rounding them', async () => {
    const server = new FakeKurrentServer();
    const ledger = open(server);
    server.jumpTo(BigInt(Number.MAX_SAFE_INTEGER) + 10n);
    await expect(ledger.append('late', [declared('e1')], NO_STREAM)).rejects.toThrow(/MAX_SAFE_INTEGER/);
    await expect(ledger.readAll(0, 10)).rejects.toThrow(/MAX_SAFE_INTEGER/);
  });
});
