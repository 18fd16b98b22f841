import type { OpenWork } from './open-work.js';
import { withStoredTrace } from '../tracing/index.js';
import type { SagaRunner } from './saga-runner.js';

/**
 * Resumes every open saga: one paused on an unknown step moves on once the reconciler or a human
 * settles it, and one whose instance died mid-compensation is finished by whichever instance runs this.
 */
export class SagaWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly openWork: OpenWork, private readonly runner: SagaRunner, private readonly tickMs = 250, private readonly onError: (error: unknown) => void = () => {}) {}

  async tick(): Promise<void> {
    await this.openWork.catchUp();
    for (const { tenant, workflowId, traceparent } of this.openWork.openSagas()) {
      try {
        // Steps it takes now join the trace of the command that started it (as the reconciler's checks do an effect's).
        await withStoredTrace(traceparent, () => this.runner.advance(tenant, workflowId));
      } catch (error) {
        this.onError(error);
      }
    }
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick().then(() => undefined, this.onError).finally(() => {
        if (!this.stopped) this.timer = setTimeout(loop, this.tickMs);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
