import { describe, expect, it } from 'vitest';
import { isEffectdError } from '../../src/core/errors.js';
import { GroupCommitLedger } from '../../src/ledger/group-commit-ledger.js';
import { ConcurrencyError, NO_STREAM, type Ledger } from '../../src/ledger/ledger.port.js';
import { workflowStream } from '../../src/core/streams.js';
import { declared, finished, started } from '../support/events.js';

/** The port's optional capabilities; each adapter's harness declares which it offers. */
const OPTIONAL_CAPABILITIES = ['appendMany', 'readStreams', 'locateEffect'] as const satisfies readonly (keyof Ledger)[];
type OptionalCapability = (typeof OPTIONAL_CAPABILITIES)[number];

export interface LedgerHarness {
  /** `true` where the adapter offers the capability, else why it does not (its cases are then reported as skipped). */
  capabilities: Record<OptionalCapability, true | { absent: string }>;
  /** A fresh, empty ledger. */
  open(): Promise<Ledger>;
  /** A second handle on the SAME storage (another connection / process view). */
  openSecond(first: Ledger): Promise<Ledger>;
  dispose(ledger: Ledger): Promise<void>;
}

/** What KurrentDBLedger offers, for its suite on a server and on the fake client alike. */
export const KURRENTDB_CAPABILITIES: LedgerHarness['capabilities'] = {
  appendMany: { absent: 'the server appends to one stream per call; no transaction spans streams' },
  readStreams: { absent: 'the server reads one stream per call' },
  locateEffect: { absent: 'the server has no index by effect id; finding one would scan $all' },
};

let counter = 0;
const streamName = () => `workflow-contract-${process.pid}-${Date.now()}-${++counter}`;

function offers<C extends OptionalCapability>(ledger: Ledger, capability: C): ledger is Ledger & Required<Pick<Ledger, C>> {
  return typeof ledger[capability] === 'function';
}

/**
 * The one ledger contract suite. Every adapter runs exactly this code, twice: on its own and behind
 * GroupCommitLedger, as the service runs every ledger.
 */
export function ledgerContract(name: string, harness: () => LedgerHarness | { skip: string }) {
  const h = harness();
  if ('skip' in h) {
    for (const suite of [name, `${name} behind group commit`]) {
      describe.skip(`ledger contract: ${suite} — skipped: ${h.skip}`, () => {
        it('contract suite', () => {});
      });
    }
    return;
  }
  contractSuite(name, h);
  contractSuite(`${name} behind group commit`, behindGroupCommit(h));
}

/** The harness's ledgers, each wrapped in GroupCommitLedger; it offers appendMany and readStreams itself. */
function behindGroupCommit(h: LedgerHarness): LedgerHarness {
  const inners = new WeakMap<Ledger, Ledger>();
  const wrap = (inner: Ledger) => {
    const ledger = new GroupCommitLedger(inner);
    inners.set(ledger, inner);
    return ledger;
  };
  return {
    capabilities: { ...h.capabilities, appendMany: true, readStreams: true },
    open: async () => wrap(await h.open()),
    openSecond: async (first) => wrap(await h.openSecond(inners.get(first)!)),
    dispose: (ledger) => h.dispose(inners.get(ledger)!),
  };
}

function contractSuite(name: string, h: LedgerHarness) {
  describe(`ledger contract: ${name}`, () => {
    const withLedger = (fn: (ledger: Ledger) => Promise<void>) => async () => {
      const ledger = await h.open();
      try {
        await fn(ledger);
      } finally {
        await h.dispose(ledger);
      }
    };
    /** A case for an optional capability: skipped, with the harness's reason, where the adapter lacks it. */
    const itWith = <C extends OptionalCapability>(capability: C, title: string, fn: (ledger: Ledger & Required<Pick<Ledger, C>>) => Promise<void>) => {
      const offered = h.capabilities[capability];
      if (offered !== true) {
        it.skip(`${title} — skipped: ${name} has no ${capability} (${offered.absent})`, () => {});
        return;
      }
      it(title, withLedger(async (ledger) => {
        if (!offers(ledger, capability)) throw new Error(`${name} declares ${capability}, but its ledger has none`);
        await fn(ledger);
      }));
    };

    it('offers exactly the optional capabilities its harness declares', withLedger(async (ledger) => {
      expect(OPTIONAL_CAPABILITIES.filter((c) => offers(ledger, c))).toEqual(OPTIONAL_CAPABILITIES.filter((c) => h.capabilities[c] === true));
    }));

    it('appends to a new stream with NO_STREAM and reads it back in order', withLedger(async (ledger) => {
      const stream = streamName();
      const result = await ledger.append(stream, [declared('e1'), started('e1', 1, 1_100)], NO_STREAM);
      expect(result.revision).toBe(1);
      const events = await ledger.readStream(stream);
      expect(events.map((e) => [e.revision, e.event.type])).toEqual([[0, 'EffectDeclared'], [1, 'AttemptStarted']]);
      expect(events[0]!.event).toEqual(declared('e1'));
      expect(events[1]!.position).toBeGreaterThan(events[0]!.position);
    }));

    it('gives back every field of the events of an effect exactly, in its workflow stream (the one that names its tenant and workflow) and in any other', withLedger(async (ledger) => {
      const workflowId = `wf ${process.pid}/${Date.now()}-${++counter}`;
      const inWorkflow = workflowStream('t ü', workflowId);
      const effectId = 'eff_1622bfa41f72d3c164b8cb0028be3867dbe59e7b';
      const events = [
        declared(effectId, 1_796_125_018_423, { tenant: 't ü', workflowId, intentDigest: '56c702844d7ed68bb64027e73e1661ee3a6033f594947c16535b2f39549c11a0', contentKey: 'content-79094e13cc09bfcb55a6a450bb623350', args: { amount: 4901, v: 2, a: { at: 'x' } }, onBehalfOf: 'alice' }),
        started(effectId, 1, 1_796_125_018_424, { keyExpiresAt: null, request: { method: 'POST', path: '/v1/charges', body: `{"ref":"${effectId}","n":1}`, encoding: 'json', keyHeader: 'Idempotency-Key' } }),
        { ...finished(effectId, 1, 1_796_125_018_430, 'committed', 'ch_1'), httpStatus: 200, reason: 'HTTP 200' },
        { ...finished(effectId, 2, 1_796_125_018_431, 'unknown'), httpStatus: 502, reason: 'HTTP 200', replayed: true },
      ];
      for (const stream of [inWorkflow, streamName()]) {
        await ledger.append(stream, events, NO_STREAM);
        expect((await ledger.readStream(stream)).map((e) => e.event)).toEqual(events);
      }
      if (offers(ledger, 'locateEffect')) expect(await ledger.locateEffect(effectId)).toBe(inWorkflow);
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
      // readAll may hold back what committed after a transaction still open anywhere on the server
      // (PostgreSQL: below the snapshot's xmin, so no position is ever skipped): visible soon, not at once.
      let all: Awaited<ReturnType<Ledger['readAll']>> = [];
      const mineOf = () => all.filter((e) => e.stream === a || e.stream === b);
      for (const until = Date.now() + 10_000; mineOf().length < 3 && Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
        all = await ledger.readAll(start.position - 1, 100);
      }
      expect(mineOf().map((e) => `${e.stream === a ? 'a' : 'b'}:${e.event.type}`)).toEqual(['a:EffectDeclared', 'b:EffectDeclared', 'a:AttemptStarted']);
      const positions = all.map((e) => e.position);
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      const page = await ledger.readAll(start.position - 1, 2);
      expect(page).toHaveLength(2);
      const rest = await ledger.readAll(page[1]!.position, 100);
      expect(rest[0]!.position).toBeGreaterThan(page[1]!.position);
    }));

    it('an append of many events (several effects, more than a storage row holds) reads back whole, from any revision, and readAll walks it in small pages, each event once, in order', withLedger(async (ledger) => {
      const stream = streamName();
      const events = [declared('e1'), started('e1', 1, 1_100), ...Array.from({ length: 150 }, (_, i) => finished('e1', 1, 1_200 + i, 'unknown')), declared('e2'), declared('e3')];
      const written = await ledger.append(stream, events, NO_STREAM);
      expect(written.revision).toBe(events.length - 1);
      const all = await ledger.readStream(stream);
      expect(all.map((e) => e.event)).toEqual(events);
      expect(all.map((e) => e.revision)).toEqual(events.map((_, i) => i));
      expect(all.at(-1)!.position).toBe(written.position);
      for (const after of [0, 62, 63, 64, 100, 151, 152, 153]) expect((await ledger.readStream(stream, after)).map((e) => e.revision)).toEqual(all.slice(after + 1).map((e) => e.revision));
      expect((await ledger.append(stream, [started('e2', 1, 2_000)], events.length - 1)).revision).toBe(events.length);
      await expect(ledger.append(stream, [started('e2', 1, 2_000)], 70)).rejects.toBeInstanceOf(ConcurrencyError); // inside the append, stale
      let walked: Awaited<ReturnType<Ledger['readAll']>> = [];
      for (let from = all[0]!.position - 1, until = Date.now() + 10_000; walked.length < events.length + 1 && Date.now() < until;) {
        const page = (await ledger.readAll(from, 7)).filter((e) => e.stream === stream);
        if (page.length === 0) await new Promise((r) => setTimeout(r, 50));
        else [walked, from] = [[...walked, ...page], page.at(-1)!.position];
      }
      expect(walked.map((e) => e.revision)).toEqual([...events.map((_, i) => i), events.length]);
    }));

    itWith('appendMany', 'appendMany (group commit): many streams in one commit, each request answered as its own append would be', async (ledger) => {
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
    });

    itWith('appendMany', 'appendMany: a stale request (racing writer, or the same stream twice) fails alone and all-or-nothing; order is kept', async (ledger) => {
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
    });

    itWith('readStreams', 'readStreams: many reads in one call, each as readStream answers it (unknown streams empty, order kept)', async (ledger) => {
      const [a, b, c] = [streamName(), streamName(), streamName()];
      await ledger.append(a, [declared('e1'), started('e1', 1, 1_100), finished('e1', 1, 1_200, 'unknown')], NO_STREAM);
      await ledger.append(b, [declared('e2')], NO_STREAM);
      const [rb, rc, ra, raAfter0, rb2, rcAfter3] = await ledger.readStreams([
        { stream: b }, { stream: c }, { stream: a }, { stream: a, afterRevision: 0 }, { stream: b }, { stream: c, afterRevision: 3 },
      ]);
      expect(ra).toEqual(await ledger.readStream(a));
      expect(raAfter0).toEqual(await ledger.readStream(a, 0));
      expect(raAfter0!.map((e) => e.revision)).toEqual([1, 2]);
      expect(rb!.map((e) => e.event.type)).toEqual(['EffectDeclared']);
      expect(rb2).toEqual(rb);
      expect(rc).toEqual([]);
      expect(rcAfter3).toEqual([]);
      expect(await ledger.readStreams([])).toEqual([]);
    });

    it('reads a stream after a revision: after NO_STREAM all of it, after the last none, after a middle one only the later ones', withLedger(async (ledger) => {
      const stream = streamName();
      await ledger.append(stream, [declared('e1'), started('e1', 1, 1_100)], NO_STREAM);
      await ledger.append(stream, [finished('e1', 1, 1_200, 'unknown'), started('e1', 2, 1_300)], 1);
      const all = await ledger.readStream(stream);
      expect(await ledger.readStream(stream, NO_STREAM)).toEqual(all);
      expect(await ledger.readStream(stream, 3)).toEqual([]);
      expect(await ledger.readStream(stream, 1)).toEqual(all.slice(2));
      expect((await ledger.readStream(stream, 0)).map((e) => e.revision)).toEqual([1, 2, 3]);
      expect(await ledger.readStream(streamName(), 2)).toEqual([]);
    }));

    it('reading on from a revision sees what a second handle appended in between', withLedger(async (ledger) => {
      const second = await h.openSecond(ledger);
      try {
        const stream = streamName();
        await ledger.append(stream, [declared('e1')], NO_STREAM);
        const seen = await ledger.readStream(stream);
        await second.append(stream, [started('e1', 1, 1_100, { instanceId: 'writer-b' })], 0);
        const next = await ledger.readStream(stream, seen.at(-1)!.revision);
        expect(next.map((e) => [e.revision, e.event.type])).toEqual([[1, 'AttemptStarted']]);
        await ledger.append(stream, [finished('e1', 1, 1_200, 'committed', 'ch_1')], 1);
        expect((await second.readStream(stream, 0)).map((e) => e.revision)).toEqual([1, 2]);
        expect([...seen, ...next, ...(await ledger.readStream(stream, 1))]).toEqual(await second.readStream(stream));
      } finally {
        if (second !== ledger) await second.close();
      }
    }));

    itWith('locateEffect', 'locateEffect: the stream holding an effect\'s EffectDeclared; undefined for an id never declared', async (ledger) => {
      const [a, b] = [streamName(), streamName()];
      await ledger.append(a, [declared('e1'), started('e1', 1, 1_100)], NO_STREAM);
      await ledger.append(b, [started('e-undeclared', 1, 1_100)], NO_STREAM);
      expect(await ledger.locateEffect('e1')).toBe(a);
      expect(await ledger.locateEffect('e-undeclared')).toBeUndefined();
      expect(await ledger.locateEffect('e-unknown')).toBeUndefined();
    });

    itWith('locateEffect', 'locateEffect: two effects in two streams, each found in its own', async (ledger) => {
      const [a, b] = [streamName(), streamName()];
      await ledger.append(a, [declared('e1')], NO_STREAM);
      await ledger.append(b, [declared('e2', 1_000, { workflowId: 'wf-2' })], NO_STREAM);
      await ledger.append(a, [declared('e3', 1_000, { step: '2' })], 0);
      expect(await Promise.all(['e1', 'e2', 'e3'].map((id) => ledger.locateEffect(id)))).toEqual([a, b, a]);
    });

    itWith('locateEffect', 'locateEffect: still found through a reopened handle', async (ledger) => {
      const stream = streamName();
      await ledger.append(stream, [declared('e1')], NO_STREAM);
      const reopened = await h.openSecond(ledger);
      try {
        if (!offers(reopened, 'locateEffect')) throw new Error(`${name}: the reopened ledger has no locateEffect`);
        expect(await reopened.locateEffect('e1')).toBe(stream);
      } finally {
        if (reopened !== ledger) await reopened.close();
      }
    });

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
