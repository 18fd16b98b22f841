import type { LedgerEvent } from '../core/events.js';
import { ConcurrencyError, type AppendRequest, type AppendResult, type Ledger, type RecordedEvent } from './ledger.port.js';

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

  readStream(stream: string): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream);
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
