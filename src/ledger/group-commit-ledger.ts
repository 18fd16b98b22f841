import type { EffectdError } from '../core/errors.js';
import type { LedgerEvent } from '../core/events.js';
import { ConcurrencyError, isLedgerUnreachable, unreachableNotSent, type AppendRequest, type AppendResult, type Ledger, type RecordedEvent, type StreamRead } from './ledger.port.js';

interface QueuedRead {
  read: StreamRead;
  resolve(events: RecordedEvent[]): void;
  reject(error: unknown): void;
}

interface Queued {
  request: AppendRequest;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

const MAX_BATCH = 500;
/**
 * After a batch found the ledger unreachable (its timeouts ran out), the operations queued behind it
 * and those that arrive within this long are answered at once — not sent, nothing recorded — instead
 * of each waiting out another timeout (issue 30: a caller of a cut instance waited batch after batch,
 * past its own 8 s timeout). Then the next batch tries the ledger again.
 */
const UNREACHABLE_HOLD_MS = 1_000;

/**
 * Group commit in front of any Ledger: while one durable commit is in flight, the appends that
 * arrive queue up and go together in the next one (`appendMany`). An append alone is committed at
 * once, so latency at low load is unchanged; under load many effects share one fsync. Every caller
 * gets exactly what its own `append` would have answered (its result, or its ConcurrencyError).
 */
export class GroupCommitLedger implements Ledger {
  readonly kind: string;
  /** Present only when the inner ledger has it (`declare`: no own property otherwise). */
  declare readonly locateEffect?: (effectId: string) => Promise<string | undefined>;
  declare readonly probeWrite?: () => Promise<void>;
  private queue: Queued[] = [];
  private committing = false;
  private reads: QueuedRead[] = [];
  private reading = false;
  /** Every operation not yet answered (queued or in flight); close() waits for them. */
  private readonly pending = new Set<Promise<unknown>>();
  private closing: Promise<void> | undefined;
  /** Set when a batch found the ledger unreachable: until when operations are answered at once, and with what. */
  private unreachable: { until: number; error: EffectdError } | undefined;

  constructor(private readonly inner: Ledger) {
    this.kind = inner.kind;
    const { locateEffect } = inner;
    if (locateEffect) this.locateEffect = (effectId) => this.admit('locateEffect', () => locateEffect.call(inner, effectId));
    const { probeWrite } = inner;
    if (probeWrite) this.probeWrite = () => this.admit('probeWrite', () => probeWrite.call(inner));
  }

  append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult> {
    return this.admit('append', () => {
      const held = this.heldBack();
      if (held) return Promise.reject(held);
      if (!this.inner.appendMany) return this.inner.append(stream, events, expectedRevision);
      if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
      return new Promise<AppendResult>((resolve, reject) => {
        this.queue.push({ request: { stream, events, expectedRevision }, resolve, reject });
        if (!this.committing) void this.commitQueued();
      });
    });
  }

  appendMany(requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]> {
    if (!this.inner.appendMany) return this.admit('appendMany', () => appendInOrder(this.inner, requests));
    return Promise.all(requests.map((r) => conflictAsValue(this.append(r.stream, r.events, r.expectedRevision))));
  }

  /** Reads coalesce the same way: the reads that arrive during one query go together in the next (each sees every append that completed before it was called). */
  readStream(stream: string, afterRevision?: number): Promise<RecordedEvent[]> {
    return this.admit('readStream', () => {
      const held = this.heldBack();
      if (held) return Promise.reject(held);
      if (!this.inner.readStreams) return this.inner.readStream(stream, afterRevision);
      return new Promise<RecordedEvent[]>((resolve, reject) => {
        this.reads.push({ read: { stream, afterRevision }, resolve, reject });
        if (!this.reading) void this.readQueued();
      });
    });
  }

  readStreams(reads: readonly StreamRead[]): Promise<RecordedEvent[][]> {
    return Promise.all(reads.map((r) => this.readStream(r.stream, r.afterRevision)));
  }

  readAll(fromPosition: number, limit: number): Promise<RecordedEvent[]> {
    return this.admit('readAll', () => this.inner.readAll(fromPosition, limit));
  }

  /** Refuses new operations, waits until every queued and in-flight one is answered, then closes the inner ledger. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all(this.pending);
      await this.inner.close();
    })();
    return this.closing;
  }

  private admit<T>(operation: string, run: () => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(new Error(`${operation} refused: the ledger is closing (GroupCommitLedger.close() was called)`));
    const answer = run();
    const settled = answer.then(() => {}, () => {});
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
    return answer;
  }

  private async readQueued(): Promise<void> {
    this.reading = true;
    try {
      while (this.reads.length > 0) {
        const batch = this.reads.splice(0, MAX_BATCH);
        try {
          const results = await this.inner.readStreams!(batch.map((r) => r.read));
          batch.forEach((queued, i) => queued.resolve(results[i]!));
        } catch (error) {
          for (const queued of batch) queued.reject(error);
          this.noteUnreachable(error);
        }
      }
    } finally {
      this.reading = false;
    }
  }

  private async commitQueued(): Promise<void> {
    this.committing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          const results = await this.inner.appendMany!(batch.map((q) => q.request));
          batch.forEach((queued, i) => {
            const result = results[i]!;
            if (result instanceof ConcurrencyError) queued.reject(result);
            else queued.resolve(result);
          });
        } catch (error) {
          for (const queued of batch) queued.reject(error);
          this.noteUnreachable(error);
        }
      }
    } finally {
      this.committing = false;
    }
  }

  private heldBack(): EffectdError | undefined {
    if (!this.unreachable) return undefined;
    if (Date.now() < this.unreachable.until) return unreachableNotSent(this.unreachable.error);
    this.unreachable = undefined;
    return undefined;
  }

  /** A batch that found the ledger unreachable answers what queued behind it, and holds new operations back for a moment. */
  private noteUnreachable(error: unknown): void {
    if (!isLedgerUnreachable(error)) return;
    this.unreachable = { until: Date.now() + UNREACHABLE_HOLD_MS, error };
    const notSent = unreachableNotSent(error);
    for (const queued of this.queue.splice(0)) queued.reject(notSent);
    for (const queued of this.reads.splice(0)) queued.reject(notSent);
  }
}

/** appendMany's answer for one request: its result, or its ConcurrencyError as a value. */
function conflictAsValue(answer: Promise<AppendResult>): Promise<AppendResult | ConcurrencyError> {
  return answer.catch((error: unknown) => {
    if (error instanceof ConcurrencyError) return error;
    throw error;
  });
}

/** One at a time: concurrent appends to one stream could reach the ledger out of order. */
async function appendInOrder(ledger: Ledger, requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]> {
  const results: (AppendResult | ConcurrencyError)[] = [];
  for (const { stream, events, expectedRevision } of requests) results.push(await conflictAsValue(ledger.append(stream, events, expectedRevision)));
  return results;
}
