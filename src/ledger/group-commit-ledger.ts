import type { LedgerEvent } from '../core/events.js';
import { ConcurrencyError, type AppendRequest, type AppendResult, type Ledger, type RecordedEvent } from './ledger.port.js';

interface QueuedRead {
  stream: string;
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
 * Group commit in front of any Ledger: while one durable commit is in flight, the appends that
 * arrive queue up and go together in the next one (`appendMany`). An append alone is committed at
 * once, so latency at low load is unchanged; under load many effects share one fsync. Every caller
 * gets exactly what its own `append` would have answered (its result, or its ConcurrencyError).
 */
export class GroupCommitLedger implements Ledger {
  readonly kind: string;
  private queue: Queued[] = [];
  private committing = false;
  private reads: QueuedRead[] = [];
  private reading = false;

  constructor(private readonly inner: Ledger) {
    this.kind = inner.kind;
  }

  append(stream: string, events: readonly LedgerEvent[], expectedRevision: number): Promise<AppendResult> {
    if (!this.inner.appendMany) return this.inner.append(stream, events, expectedRevision);
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ request: { stream, events, expectedRevision }, resolve, reject });
      if (!this.committing) void this.commitQueued();
    });
  }

  appendMany(requests: readonly AppendRequest[]): Promise<(AppendResult | ConcurrencyError)[]> {
    return Promise.all(requests.map((r) => this.append(r.stream, r.events, r.expectedRevision).catch((error: unknown) => {
      if (error instanceof ConcurrencyError) return error;
      throw error;
    })));
  }

  /** Reads coalesce the same way: the reads that arrive during one query go together in the next (each sees every append that completed before it was called). */
  readStream(stream: string): Promise<RecordedEvent[]> {
    if (!this.inner.readStreams) return this.inner.readStream(stream);
    return new Promise<RecordedEvent[]>((resolve, reject) => {
      this.reads.push({ stream, resolve, reject });
      if (!this.reading) void this.readQueued();
    });
  }

  readStreams(streams: readonly string[]): Promise<RecordedEvent[][]> {
    return Promise.all(streams.map((s) => this.readStream(s)));
  }

  private async readQueued(): Promise<void> {
    this.reading = true;
    try {
      while (this.reads.length > 0) {
        const batch = this.reads.splice(0, MAX_BATCH);
        try {
          const results = await this.inner.readStreams!(batch.map((r) => r.stream));
          batch.forEach((read, i) => read.resolve(results[i]!));
        } catch (error) {
          for (const read of batch) read.reject(error);
        }
      }
    } finally {
      this.reading = false;
    }
  }

  readAll(fromPosition: number, limit: number): Promise<RecordedEvent[]> {
    return this.inner.readAll(fromPosition, limit);
  }

  close(): Promise<void> {
    return this.inner.close();
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
        }
      }
    } finally {
      this.committing = false;
    }
  }
}
