import type { OpenWork } from './open-work.js';
import { withStoredTrace } from '../tracing/index.js';
import type { EffectRunner } from './effect-runner.js';

export interface ReconcilerWorkerOptions {
  tickMs?: number;
  snapshotEveryMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * Owns every open effect: on each tick it catches the projection up and takes the next
 * reconciliation step for each effect that is due. Work grows with open effects, not history.
 */
export class ReconcilerWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastSnapshot = 0;
  private stopped = false;

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

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .then(() => undefined, (error: unknown) => this.options.onError?.(error))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(loop, this.options.tickMs ?? 200);
        });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    this.projection.save();
  }
}
