import { describe, expect, it } from 'vitest';
import { EffectdError } from '../../src/core/errors.js';
import type { LedgerEvent } from '../../src/core/events.js';
import type { WorkflowState } from '../../src/core/fold.js';
import { ConcurrencyError, NO_STREAM, type AppendRequest, type Ledger, type RecordedEvent } from '../../src/ledger/ledger.port.js';
import { WorkflowStore } from '../../src/shell/workflow-store.js';
import { declared, finished, started } from '../support/events.js';

/**
 * An in-memory ledger that counts what the store asks of it, and lets a test append behind the
 * store's back (another instance) — the cases the warm-cache rule must catch.
 */
class FakeLedger implements Ledger {
  readonly kind = 'fake';
  readonly streams = new Map<string, RecordedEvent[]>();
  reads = 0;
  appends: AppendRequest[] = [];
  conflicts = 0;
  private position = 0;

  behind(stream: string, events: readonly LedgerEvent[]): void {
    const rows = this.streams.get(stream) ?? [];
    this.write(stream, rows, events);
  }

  async append(stream: string, events: readonly LedgerEvent[], expectedRevision: number) {
    this.appends.push({ stream, events, expectedRevision });
    const rows = this.streams.get(stream) ?? [];
    if (rows.length - 1 !== expectedRevision) {
      this.conflicts++;
      throw new ConcurrencyError(stream, expectedRevision);
    }
    this.write(stream, rows, events);
    return { revision: rows.length - 1, position: this.position };
  }

  async readStream(stream: string, afterRevision = NO_STREAM) {
    this.reads++;
    return (this.streams.get(stream) ?? []).filter((r) => r.revision > afterRevision);
  }

  async readAll(): Promise<RecordedEvent[]> {
    return [];
  }

  async close(): Promise<void> {}

  private write(stream: string, rows: RecordedEvent[], events: readonly LedgerEvent[]): void {
    for (const event of events) rows.push({ stream, revision: rows.length, position: ++this.position, event });
    this.streams.set(stream, rows);
  }
}

const stream = 'workflow-t1/wf';
const statusOf = (state: WorkflowState, id: string) => state.effects.get(id)?.recordedStatus ?? 'none';

/** A store whose cache holds e1 claimed (declared + attempt 1 started), written by the store itself. */
async function warm(): Promise<{ ledger: FakeLedger; store: WorkflowStore }> {
  const ledger = new FakeLedger();
  const store = new WorkflowStore(ledger);
  await store.update(stream, () => ({ append: [declared('e1', 1_000), started('e1', 1, 1_100)], answer: () => undefined }));
  ledger.reads = 0;
  ledger.appends = [];
  return { ledger, store };
}

describe('the workflow store on a warm cache (the warm-cache rule)', () => {
  it('a new stream is appended at NO_STREAM without a read; the next decision on it reads nothing either', async () => {
    const ledger = new FakeLedger();
    const store = new WorkflowStore(ledger);
    await store.update(stream, (state) => ({ append: [declared('e1', 1_000), started('e1', 1, 1_100)], answer: () => expect(state.revision).toBe(NO_STREAM) }));
    const seen = await store.update(stream, (state) => ({ append: [finished('e1', 1, 1_200, 'committed')], answer: () => state.revision }));
    expect(seen).toBe(1);
    expect(ledger.reads).toBe(0);
    expect(ledger.appends.map((a) => a.expectedRevision)).toEqual([NO_STREAM, 1]);
  });

  it('a stream another instance created, not in this cache: the guess conflicts, the stream is read, the decision taken again on it', async () => {
    const ledger = new FakeLedger();
    ledger.behind(stream, [declared('e1', 1_000)]);
    const store = new WorkflowStore(ledger);
    const seen: string[] = [];
    await store.update(stream, (state) => {
      seen.push(statusOf(state, 'e1'));
      return { append: state.effects.has('e1') ? [started('e1', 1, 1_100)] : [declared('e1', 1_000), started('e1', 1, 1_100)], answer: () => undefined };
    });
    expect(seen).toEqual(['none', 'declared']);
    expect(ledger.reads).toBe(1);
    expect(ledger.streams.get(stream)!.map((r) => r.event.type)).toEqual(['EffectDeclared', 'AttemptStarted']);
  });

  it('another instance appended behind the cache: the append at the cached revision conflicts, the new events are read, the decision sees them', async () => {
    const { ledger, store } = await warm();
    ledger.behind(stream, [finished('e1', 1, 1_150, 'unknown')]);
    const seen: string[] = [];
    const answer = await store.update(stream, (state) => {
      seen.push(statusOf(state, 'e1'));
      // What the shell does with an outcome: record it only if the rules still accept it.
      if (state.effects.get('e1')!.attempts[0]!.finished) return { answer: 'already settled' };
      return { append: [finished('e1', 1, 1_200, 'committed')], answer: () => 'recorded' };
    });
    expect(seen).toEqual(['dispatching', 'unknown']);
    expect(answer).toBe('already settled');
    expect(ledger.conflicts).toBe(1);
    expect(ledger.reads).toBe(1);
    expect(ledger.streams.get(stream)).toHaveLength(3);
  });

  it('an answer that is not final, decided on the cache, is never given: the stream is read and the answer comes from the truth', async () => {
    const { ledger, store } = await warm();
    ledger.behind(stream, [finished('e1', 1, 1_150, 'committed')]);
    const calls: string[] = [];
    const answer = await store.update(stream, (state) => {
      calls.push(statusOf(state, 'e1'));
      return { answer: statusOf(state, 'e1') };
    });
    expect(calls).toEqual(['dispatching', 'committed']);
    expect(answer).toBe('committed');
    expect(ledger.reads).toBe(1);
    expect(ledger.appends).toHaveLength(0);
  });

  it('even when nothing was appended behind it, a non-final answer costs a read (the cache cannot know)', async () => {
    const { ledger, store } = await warm();
    expect(await store.update(stream, (state) => ({ answer: statusOf(state, 'e1') }))).toBe('dispatching');
    expect(ledger.reads).toBe(1);
  });

  it('a final answer (committed: it never changes) is given from the warm cache with no round trip', async () => {
    const { ledger, store } = await warm();
    await store.update(stream, () => ({ append: [finished('e1', 1, 1_200, 'committed')], answer: () => undefined }));
    ledger.reads = 0;
    ledger.appends = [];
    const answer = await store.update(stream, (state) => ({ answer: statusOf(state, 'e1'), final: statusOf(state, 'e1') === 'committed' }));
    expect(answer).toBe('committed');
    expect(ledger.reads).toBe(0);
    expect(ledger.appends).toHaveLength(0);
  });

  it('an intent_conflict is final (declarations never change); any other error decided on the cache is decided again on a read', async () => {
    const { ledger, store } = await warm();
    let decisions = 0;
    const conflict = await store.update(stream, () => {
      decisions++;
      throw new EffectdError('intent_conflict', 'declared with other arguments');
    }).catch((e: unknown) => e);
    expect((conflict as EffectdError).code).toBe('intent_conflict');
    expect([decisions, ledger.reads]).toEqual([1, 0]);

    ledger.behind(stream, [finished('e1', 1, 1_150, 'committed')]);
    decisions = 0;
    const seen: string[] = [];
    const answer = await store.update(stream, (state) => {
      decisions++;
      seen.push(statusOf(state, 'e1'));
      if (statusOf(state, 'e1') !== 'committed') throw new Error('a stale state says this');
      return { answer: 'from the truth' };
    });
    expect(answer).toBe('from the truth');
    expect(seen).toEqual(['dispatching', 'committed']);
    expect(ledger.reads).toBe(1);
  });

  it('a batch that appends proves its state current: answers decided with it stand without a read', async () => {
    const { ledger, store } = await warm();
    const results = await Promise.all([
      store.update(stream, () => ({ append: [declared('e2', 1_300, { step: 'e2' })], answer: () => 'appended' })),
      // Queued behind the first: decided together, on the state the first leaves.
      store.update(stream, (state) => ({ answer: `${statusOf(state, 'e1')}/${statusOf(state, 'e2')}` })),
      store.update(stream, (state) => ({ answer: `${statusOf(state, 'e1')}/${statusOf(state, 'e2')}` })),
    ]);
    expect(results[0]).toBe('appended');
    expect(ledger.appends.length).toBeGreaterThanOrEqual(1);
    expect(results[2]).toBe('dispatching/declared');
  });

  it('an append that failed for another reason leaves the cache behind the ledger: the next decision conflicts and reads, never builds on a guess', async () => {
    const { ledger, store } = await warm();
    const real = ledger.append.bind(ledger);
    // The write lands but its answer is lost (a timeout after commit).
    ledger.append = async (s, events, expected) => {
      await real(s, events, expected);
      throw new Error('connection reset');
    };
    await expect(store.update(stream, () => ({ append: [finished('e1', 1, 1_200, 'unknown')], answer: () => undefined }))).rejects.toThrow('connection reset');
    ledger.append = real;
    const seen: string[] = [];
    await store.update(stream, (state) => {
      seen.push(statusOf(state, 'e1'));
      return state.effects.get('e1')!.attempts[0]!.finished ? { answer: undefined } : { append: [finished('e1', 1, 1_300, 'committed')], answer: () => undefined };
    });
    expect(seen).toEqual(['dispatching', 'unknown']);
    expect(ledger.streams.get(stream)!.map((r) => r.event.type)).toEqual(['EffectDeclared', 'AttemptStarted', 'AttemptFinished']);
  });
});
