/** How often a background pass runs: `everyMs` while it finds work, slowing to `idleMs` while it finds none. */
export interface Pace {
  everyMs: number;
  idleMs: number;
}

/**
 * A background pass run over and over (catching the read side up, stepping due effects, resuming
 * sagas). While a pass finds work the next one comes `everyMs` later; each pass that finds none
 * doubles the wait, up to `idleMs`; `wake()` (this instance just wrote) brings a slowed loop back
 * to `everyMs`. An idle instance so polls its ledger a few times a second instead of fifteen: measured
 * with PostgreSQL, 10 → 2 ms of CPU a second over HTTP and 22 → 9 with the Kafka ingress
 * (docs/benchmark.md). What another instance wrote is seen at most `idleMs` late.
 */
export class PacedLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private waitMs: number;
  private stopped = true;

  constructor(private readonly pass: () => Promise<boolean>, private readonly pace: Pace, private readonly onError: (error: unknown) => void) {
    this.waitMs = pace.everyMs;
  }

  /** Runs the first pass now, or after `firstInMs` (0: once the code running now has finished). */
  start(firstInMs?: number): void {
    this.stopped = false;
    if (firstInMs === undefined) this.run();
    else this.schedule(firstInMs);
  }

  /**
   * Work may have arrived: a loop that slowed down runs its next pass `everyMs` from now, as a busy
   * one would (not at once: what woke it, such as a saga run inline, is still at work).
   */
  wake(): void {
    if (this.waitMs === this.pace.everyMs) return;
    this.waitMs = this.pace.everyMs;
    if (this.timer === undefined || this.stopped) return;
    clearTimeout(this.timer);
    this.schedule(this.pace.everyMs);
  }

  /** Waits for a running pass; no pass starts after this. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private run(): void {
    this.running = this.pass()
      .then((busy) => {
        this.waitMs = busy ? this.pace.everyMs : Math.min(this.waitMs * 2, this.pace.idleMs);
      }, this.onError)
      .finally(() => {
        if (!this.stopped) this.schedule(this.waitMs);
      });
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, ms);
  }
}
