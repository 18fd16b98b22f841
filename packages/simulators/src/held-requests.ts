import type { SimClock } from './sim-clock.js';

const MAX_TIMER_MS = 60 * 60 * 1000;

interface Held {
  timer: NodeJS.Timeout | undefined;
  /** SimClock time at which to release; undefined for a real-time hold. */
  dueAt: number | undefined;
  release: () => void;
  drop: () => void;
}

/**
 * Requests the fault injector is holding back: for real time (delay) or until the SimClock reaches
 * a due time (late commit), whichever way the clock gets there — elapsing or jumping.
 */
export class HeldRequests {
  private readonly held = new Set<Held>();
  private readonly unsubscribe: () => void;

  constructor(private readonly clock: SimClock) {
    this.unsubscribe = clock.onAdvance((now) => {
      for (const item of [...this.held]) if (item.dueAt !== undefined && item.dueAt <= now) this.fire(item);
    });
  }

  forRealMs(ms: number, release: () => void, drop: () => void): void {
    const item: Held = { timer: undefined, dueAt: undefined, release, drop };
    item.timer = setTimeout(() => this.fire(item), ms);
    this.held.add(item);
  }

  untilSimTime(dueAt: number, release: () => void, drop: () => void): void {
    const item: Held = { timer: undefined, dueAt, release, drop };
    this.held.add(item);
    this.arm(item);
  }

  /** Drops every held request without releasing it (reset, shutdown). */
  dropAll(): void {
    for (const item of [...this.held]) {
      clearTimeout(item.timer);
      this.held.delete(item);
      item.drop();
    }
  }

  dispose(): void {
    this.dropAll();
    this.unsubscribe();
  }

  private arm(item: Held): void {
    const wait = (item.dueAt ?? 0) - this.clock.now();
    if (wait <= 0) {
      this.fire(item);
      return;
    }
    // Re-armed in bounded steps: setTimeout cannot wait longer than ~24.8 days.
    item.timer = setTimeout(() => this.arm(item), Math.min(wait, MAX_TIMER_MS));
  }

  private fire(item: Held): void {
    if (!this.held.delete(item)) return;
    clearTimeout(item.timer);
    item.release();
  }
}
