import type { OpenWork } from './open-work.js';
import { withStoredTrace } from '../tracing/index.js';
import type { SagaRunner } from './saga-runner.js';
import { PacedLoop, type Pace } from '../shared/paced-loop.js';

/**
 * Resumes every open saga: one paused on an unknown step moves on once the reconciler or a human
 * settles it, and one whose instance died mid-compensation is finished by whichever instance runs this.
 */
export class SagaWorker {
  private loop: PacedLoop | undefined;

  constructor(private readonly openWork: OpenWork, private readonly runner: SagaRunner, private readonly pace: Pace = { everyMs: 250, idleMs: 250 }, private readonly onError: (error: unknown) => void = () => {}) {}

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

  /** Ticks at the pace's rate while a saga is open; slower while none is. */
  start(): void {
    this.loop = new PacedLoop(async () => {
      await this.tick();
      return this.openWork.openSagas().length > 0;
    }, this.pace, this.onError);
    this.loop.start();
  }

  /** This instance wrote: a saga may have started. */
  wake(): void {
    this.loop?.wake();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }
}
