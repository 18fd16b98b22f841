import type { OpenWork } from './open-work.js';
import { withStoredTrace } from '../tracing/index.js';
import type { EffectRunner } from './effect-runner.js';
import { PacedLoop } from '../shared/paced-loop.js';

export interface ReconcilerWorkerOptions {
  tickMs?: number;
  /** The most a tick waits while nothing is open (default: tickMs, never slower). */
  idleTickMs?: number;
  snapshotEveryMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * Owns every open effect: on each tick it catches the projection up and takes the next
 * reconciliation step for each effect that is due. Work grows with open effects, not history.
 */
export class ReconcilerWorker {
  private loop: PacedLoop | undefined;
  private lastSnapshot = 0;

  constructor(
    private readonly projection: OpenWork,
    private readonly runner: EffectRunner,
    private readonly now: () => number,
    private readonly options: ReconcilerWorkerOptions = {},
  ) {}

  /** One pass: catch up, then step every due effect. Returns how many effects it stepped. */
  async tick(): Promise<number> {
    await this.projection.catchUp();
    let stepped = 0;
    for (const { stream, state } of this.projection.list()) {
      // Not due, or an answer is settling it inline right now (bounded by its budget): one actor at a time.
      if (!this.runner.due(state, this.now())) continue;
      try {
        // In the trace of the command that declared it (when traces are exported and it was stored).
        await withStoredTrace(state.declared.traceparent, () => this.runner.reconcile(stream, state.effectId));
        stepped++;
      } catch (error) {
        this.options.onError?.(error);
      }
    }
    if (this.now() - this.lastSnapshot >= (this.options.snapshotEveryMs ?? 5_000)) {
      await this.projection.catchUp();
      this.projection.save();
      this.lastSnapshot = this.now();
    }
    return stepped;
  }

  /** Ticks every tickMs while any effect is open (each has a due time); slower while none is. */
  start(): void {
    const everyMs = this.options.tickMs ?? 200;
    this.loop = new PacedLoop(async () => (await this.tick()) > 0 || this.projection.list().length > 0, { everyMs, idleMs: Math.max(everyMs, this.options.idleTickMs ?? everyMs) }, (error) => this.options.onError?.(error));
    this.loop.start();
  }

  /** This instance wrote: an effect may have opened. */
  wake(): void {
    this.loop?.wake();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
    this.projection.save();
  }
}
