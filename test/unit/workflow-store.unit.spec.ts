import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isEffectdError } from '../../src/core/errors.js';
import type { LedgerEvent } from '../../src/core/events.js';
import { ConcurrencyError, type Ledger } from '../../src/ledger/ledger.port.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { WorkflowStore } from '../../src/shell/workflow-store.js';
import { declared, started } from '../support/events.js';

const open: Ledger[] = [];
function ledgerPair(): [SqliteLedger, SqliteLedger] {
  const file = join(mkdtempSync(join(tmpdir(), 'effectd-store-')), 'ledger.db');
  const pair: [SqliteLedger, SqliteLedger] = [new SqliteLedger(file), new SqliteLedger(file)];
  open.push(...pair);
  return pair;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});

/** Records each readStream's `afterRevision`: what the store asked the ledger for. */
function recording(inner: Ledger): Ledger & { reads: number[] } {
  const reads: number[] = [];
  return Object.assign(Object.create(inner) as Ledger, { reads, readStream: (stream: string, after?: number) => (reads.push(after ?? -1), inner.readStream(stream, after)) });
}

const declare = (id: string): LedgerEvent[] => [declared(id, 1_000, { step: id })];

describe('the workflow store', () => {
  it('reads only the events after the cached revision, and sees what another instance appended', async () => {
    const [a, b] = ledgerPair();
    const ledger = recording(a);
    const store = new WorkflowStore(ledger);
    const other = new WorkflowStore(b);
    const stream = 'workflow-t1/wf-1';
    // Its own appends keep the cache current: deciding on it needs no read (the warm-cache rule).
    for (let i = 0; i < 5; i++) await store.update(stream, () => ({ append: declare(`e${i}`), answer: () => undefined }));
    expect(ledger.reads).toEqual([]);
    await other.update(stream, () => ({ append: declare('from-b'), answer: () => undefined }));
    const state = await store.read(stream);
    expect(ledger.reads).toEqual([4]);
    expect(state.revision).toBe(5);
    expect(state.effects.has('from-b')).toBe(true);
  });

  it('a lost race is decided again on the new state; both writers land, in some order', async () => {
    const [a, b] = ledgerPair();
    const stores = [new WorkflowStore(a), new WorkflowStore(b)];
    const stream = 'workflow-t1/race';
    let decisions = 0;
    await Promise.all(stores.flatMap((store, s) => [0, 1, 2].map((i) => store.update(stream, (state) => {
      decisions++;
      return { append: declare(`s${s}-${i}`), answer: (after) => after.revision };
    }))));
    const final = await stores[0]!.read(stream);
    expect(final.effects.size).toBe(6);
    expect(final.revision).toBe(5);
    expect(decisions).toBeGreaterThanOrEqual(6);
  });

  it('concurrent decisions on one stream are taken in order on each other\'s state and appended together', async () => {
    const [a] = ledgerPair();
    let appends = 0;
    const counting: Ledger = Object.assign(Object.create(a) as Ledger, { append: (...args: Parameters<Ledger['append']>) => (appends++, a.append(...args)) });
    const store = new WorkflowStore(counting);
    const stream = 'workflow-t1/burst';
    const seen = await Promise.all(Array.from({ length: 50 }, (_, i) => store.update(stream, (state) => ({ append: declare(`e${i}`), answer: (after) => [state.effects.size, after.effects.size] }))));
    // Each decision saw the ones queued before it, and nobody raced: far fewer appends than decisions.
    expect(seen.map(([before]) => before)).toEqual([...Array(50).keys()]);
    expect(seen.map(([, after]) => after)).toEqual([...Array(50).keys()].map((i) => i + 1));
    expect(appends).toBeLessThan(10);
    expect((await a.readStream(stream)).map((r) => (r.event as { effectId: string }).effectId)).toEqual([...Array(50).keys()].map((i) => `e${i}`));
  });

  it('one decision that throws fails alone; the others of its batch land', async () => {
    const [a] = ledgerPair();
    const store = new WorkflowStore(a);
    const stream = 'workflow-t1/mixed';
    const results = await Promise.allSettled([0, 1, 2].map((i) => store.update(stream, () => {
      if (i === 1) throw new Error('not this one');
      return { append: declare(`e${i}`), answer: () => i };
    })));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await store.read(stream)).effects.size).toBe(2);
  });

  it('gives up after maxConflicts lost races with one coded error, and the state it decided on is untouched', async () => {
    const [a] = ledgerPair();
    const stream = 'workflow-t1/busy';
    await a.append(stream, declare('e0'), -1);
    const always: Ledger = Object.assign(Object.create(a) as Ledger, { append: (s: string, _e: unknown, expected: number) => Promise.reject(new ConcurrencyError(s, expected)) });
    const store = new WorkflowStore(always, { maxConflicts: 3 });
    const seen: number[] = [];
    const error = await store.update(stream, (state) => {
      seen.push(state.effects.size);
      return { append: [started('e0', 1, 1_100)], answer: () => undefined };
    }).catch((e: unknown) => e);
    expect(isEffectdError(error, 'contention')).toBe(true);
    expect((error as { details: { retryAfterMs: number } }).details.retryAfterMs).toBeGreaterThan(0);
    // First on the unread guess (a stream not cached is taken as empty), then maxConflicts times on what was read.
    expect(seen).toEqual([0, 1, 1, 1]);
    expect((await store.read(stream)).effects.get('e0')!.attempts).toHaveLength(0);
  });

  it('holds at most maxCachedEffects effects, least recently used first out; an evicted stream is read whole again', async () => {
    const [a] = ledgerPair();
    const ledger = recording(a);
    const store = new WorkflowStore(ledger, { maxCachedEffects: 3 });
    for (let i = 0; i < 5; i++) await store.update(`workflow-t1/w${i}`, () => ({ append: declare(`e${i}`), answer: () => undefined }));
    expect(store.stats()).toEqual({ streams: 3, effects: 3, maxEffects: 3 });
    ledger.reads.length = 0;
    await store.read('workflow-t1/w4');
    await store.read('workflow-t1/w0');
    expect(ledger.reads).toEqual([0, -1]);
  });
});
