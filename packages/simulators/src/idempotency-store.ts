import type { SimClock } from './sim-clock.js';

export type KeyRecord<T> =
  | { state: 'in-flight'; fingerprint: string; path: string; firstUsedAt: number }
  | { state: 'done'; fingerprint: string; path: string; firstUsedAt: number; result: T };

/**
 * Keys (or client tokens) a provider deduplicates on: claimed while the request executes, then
 * holding the result. A finished record older than `retentionMs` of simulated time is pruned, so a
 * reuse after that is a brand-new request. In-flight claims never expire: they end with the request.
 */
export class IdempotencyStore<T> {
  private readonly records = new Map<string, KeyRecord<T>>();

  constructor(
    private readonly clock: SimClock,
    private readonly retentionMs: number,
  ) {}

  get(key: string): KeyRecord<T> | undefined {
    const record = this.records.get(key);
    if (record?.state === 'done' && this.clock.now() - record.firstUsedAt >= this.retentionMs) {
      this.records.delete(key);
      return undefined;
    }
    return record;
  }

  /** `firstUsedAt` is kept from an earlier record when a provider executes a key's request again (Stripe v2). */
  claim(key: string, fingerprint: string, path: string, firstUsedAt = this.clock.now()): void {
    this.records.set(key, { state: 'in-flight', fingerprint, path, firstUsedAt });
  }

  complete(key: string, result: T): void {
    const record = this.records.get(key);
    if (record === undefined) return; // the store was reset while the request executed
    this.records.set(key, { ...record, state: 'done', result });
  }

  release(key: string): void {
    if (this.records.get(key)?.state === 'in-flight') this.records.delete(key);
  }

  clear(): void {
    this.records.clear();
  }
}
