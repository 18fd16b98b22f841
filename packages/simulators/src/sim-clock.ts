import { CodedError } from './coded-error.js';
type AdvanceListener = (now: number) => void;

/**
 * Simulated time: real time plus an offset that only grows. Retention, lag and lifetime rules read
 * this clock, so a benchmark can jump 24 h at once while short lags still elapse in real time.
 */
export class SimClock {
  private offsetMs = 0;
  private readonly listeners = new Set<AdvanceListener>();

  now(): number {
    return Date.now() + this.offsetMs;
  }

  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new CodedError('invalid_command', `advance needs a finite ms >= 0, got ${ms}`);
    this.offsetMs += ms;
    const now = this.now();
    for (const listener of this.listeners) listener(now);
    return now;
  }

  onAdvance(listener: AdvanceListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
