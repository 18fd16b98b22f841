import { describe, expect, it } from 'vitest';
import { isEffectdError } from '../../src/core/errors.js';
import { ConcurrencyError, NO_STREAM, type Ledger } from '../../src/ledger/ledger.port.js';
import { declared, finished, started } from '../support/events.js';

export interface LedgerHarness {
  /** A fresh, empty ledger. */
  open(): Promise<Ledger>;
  /** A second handle on the SAME storage (another connection / process view). */
  openSecond(first: Ledger): Promise<Ledger>;
  dispose(ledger: Ledger): Promise<void>;
}

let counter = 0;
const streamName = () => `workflow-contract-${process.pid}-${Date.now()}-${++counter}`;

/** The one ledger contract suite. Every adapter runs exactly this code. */
export function ledgerContract(name: string, harness: () => LedgerHarness | { skip: string }) {
  const h = harness();
  if ('skip' in h) {
    describe.skip(`ledger contract: ${name} — skipped: ${h.skip}`, () => {
      it('contract suite', () => {});
    });
    return;
  }
  describe(`ledger contract: ${name}`, () => {
    const withLedger = (fn: (ledger: Ledger) => Promise<void>) => async () => {
      const ledger = await h.open();
      try {
        await fn(ledger);
      } finally {
        await h.dispose(ledger);
      }
    };

    it('appends to a new stream with NO_STREAM and reads it back in order', withLedger(async (ledger) => {
      const stream = streamName();
      const result = await ledger.append(stream, [declared('e1'), started('e1', 1, 1_100)], NO_STREAM);
      expect(result.revision).toBe(1);
      const events = await ledger.readStream(stream);
      expect(events.map((e) => [e.revision, e.event.type])).toEqual([[0, 'EffectDeclared'], [1, 'AttemptStarted']]);
      expect(events[0]!.event).toEqual(declared('e1'));
      expect(events[1]!.position).toBeGreaterThan(events[0]!.position);
    }));

    it('reads an unknown stream as empty', withLedger(async (ledger) => {
      expect(await ledger.readStream(streamName())).toEqual([]);
    }));

    it('appends at the expected revision and rejects a stale or a too-high one with a typed error', withLedger(async (ledger) => {
      const stream = streamName();
      await ledger.append(stream, [declared('e1')], NO_STREAM);
      await ledger.append(stream, [started('e1', 1, 1_100)], 0);
      await expect(ledger.append(stream, [finished('e1', 1, 1_200, 'committed', 'ch_1')], 0)).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(ledger.append(stream, [finished('e1', 1, 1_200, 'committed', 'ch_1')], 5)).rejects.toSatisfy((e) => isEffectdError(e, 'concurrency_conflict'));
      await expect(ledger.append(stream, [declared('e2')], NO_STREAM)).rejects.toBeInstanceOf(ConcurrencyError);
      expect((await ledger.readStream(stream)).length).toBe(2);
    }));

    it('appends a batch all-or-nothing', withLedger(async (ledger) => {
      const stream = streamName();
      await ledger.append(stream, [declared('e1')], NO_STREAM);
      await expect(ledger.append(stream, [started('e1', 1, 1_100), finished('e1', 1, 1_200, 'unknown')], NO_STREAM)).rejects.toBeInstanceOf(ConcurrencyError);
      expect((await ledger.readStream(stream)).length).toBe(1);
    }));

    it('two writers racing on one stream with the same expected revision: exactly one wins', withLedger(async (ledger) => {
      const second = await h.openSecond(ledger);
      try {
        for (let round = 0; round < 5; round++) {
          const stream = streamName();
          await ledger.append(stream, [declared('e1')], NO_STREAM);
          const results = await Promise.allSettled([
            ledger.append(stream, [started('e1', 1, 1_100, { instanceId: 'writer-a' })], 0),
            second.append(stream, [started('e1', 1, 1_100, { instanceId: 'writer-b' })], 0),
          ]);
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
          expect(rejected).toHaveLength(1);
          expect(rejected[0]!.reason).toBeInstanceOf(ConcurrencyError);
          expect((await second.readStream(stream)).length).toBe(2);
        }
      } finally {
        if (second !== ledger) await second.close();
      }
    }));

    it('reads all streams in global order from a position, in pages', withLedger(async (ledger) => {
      const [a, b] = [streamName(), streamName()];
      const start = await ledger.append(a, [declared('e1')], NO_STREAM);
      await ledger.append(b, [declared('e2')], NO_STREAM);
      await ledger.append(a, [started('e1', 1, 1_100)], 0);
      const all = await ledger.readAll(start.position - 1, 100);
      const mine = all.filter((e) => e.stream === a || e.stream === b);
      expect(mine.map((e) => `${e.stream === a ? 'a' : 'b'}:${e.event.type}`)).toEqual(['a:EffectDeclared', 'b:EffectDeclared', 'a:AttemptStarted']);
      const positions = all.map((e) => e.position);
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      const page = await ledger.readAll(start.position - 1, 2);
      expect(page).toHaveLength(2);
      const rest = await ledger.readAll(page[1]!.position, 100);
      expect(rest[0]!.position).toBeGreaterThan(page[1]!.position);
    }));

    it('appendMany (group commit): many streams in one commit, each request answered as its own append would be', withLedger(async (ledger) => {
      if (!ledger.appendMany) return; // optional on the port; adapters without it are wrapped by GroupCommitLedger
      const [a, b, c] = [streamName(), streamName(), streamName()];
      await ledger.append(b, [declared('e2')], NO_STREAM);
      const results = await ledger.appendMany([
        { stream: a, events: [declared('e1'), started('e1', 1, 1_100)], expectedRevision: NO_STREAM },
        { stream: b, events: [started('e2', 1, 1_100)], expectedRevision: 0 },
        { stream: c, events: [declared('e3')], expectedRevision: 4 },
      ]);
      expect(results[0]).toMatchObject({ revision: 1 });
      expect(results[1]).toMatchObject({ revision: 1 });
      expect(results[2]).toBeInstanceOf(ConcurrencyError);
      expect((results[1] as { position: number }).position).not.toBe((results[0] as { position: number }).position);
      expect((await ledger.readStream(a)).map((e) => e.event.type)).toEqual(['EffectDeclared', 'AttemptStarted']);
      expect((await ledger.readStream(b)).map((e) => e.revision)).toEqual([0, 1]);
      expect(await ledger.readStream(c)).toEqual([]);
    }));

    it('appendMany: a stale request (racing writer, or the same stream twice) fails alone and all-or-nothing; order is kept', withLedger(async (ledger) => {
      if (!ledger.appendMany) return;
      const [a, b] = [streamName(), streamName()];
      await ledger.append(a, [declared('e1')], NO_STREAM);
      const results = await ledger.appendMany([
        { stream: b, events: [declared('e2')], expectedRevision: NO_STREAM },
        { stream: a, events: [started('e1', 1, 1_100), finished('e1', 1, 1_200, 'unknown')], expectedRevision: NO_STREAM },
        { stream: a, events: [started('e1', 1, 1_100)], expectedRevision: 0 },
        { stream: a, events: [finished('e1', 1, 1_200, 'committed', 'ch_1')], expectedRevision: 1 },
        { stream: b, events: [started('e2', 1, 1_100)], expectedRevision: 5 },
      ]);
      expect(results.map((r) => (r instanceof ConcurrencyError ? 'conflict' : r.revision))).toEqual([0, 'conflict', 1, 2, 'conflict']);
      expect((await ledger.readStream(a)).map((e) => e.event.type)).toEqual(['EffectDeclared', 'AttemptStarted', 'AttemptFinished']);
      expect((await ledger.readStream(b)).map((e) => e.event.type)).toEqual(['EffectDeclared']);
    }));

    it('readStreams: many streams in one call, each as readStream returns it (unknown ones empty, order kept)', withLedger(async (ledger) => {
      if (!ledger.readStreams) return;
      const [a, b, c] = [streamName(), streamName(), streamName()];
      await ledger.append(a, [declared('e1'), started('e1', 1, 1_100)], NO_STREAM);
      await ledger.append(b, [declared('e2')], NO_STREAM);
      const [rb, rc, ra, rb2] = await ledger.readStreams([b, c, a, b]);
      expect(ra).toEqual(await ledger.readStream(a));
      expect(rb!.map((e) => e.event.type)).toEqual(['EffectDeclared']);
      expect(rb2).toEqual(rb);
      expect(rc).toEqual([]);
    }));

    it('keeps what was appended across a reopen', withLedger(async (ledger) => {
      const stream = streamName();
      await ledger.append(stream, [declared('e1'), started('e1', 1, 1_100)], NO_STREAM);
      const reopened = await h.openSecond(ledger);
      try {
        expect((await reopened.readStream(stream)).map((e) => e.event.type)).toEqual(['EffectDeclared', 'AttemptStarted']);
      } finally {
        if (reopened !== ledger) await reopened.close();
      }
    }));
  });
}
