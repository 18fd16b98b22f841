/** One part of the service that a drain closes. */
export interface DrainStep {
  /** Named in the log when the drain times out before this step finished. */
  name: string;
  close(): Promise<void>;
  /** What it still has in flight (e.g. "2 requests"), for that log line. */
  inFlight?(): string;
}

/** Where a drain says what it does (effectd's logger; any pino-like logger fits). */
export interface DrainLog {
  info(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

/**
 * SIGTERM, SIGINT and SIGUSR2 drain the service; a second one while draining exits at once with
 * code 1. (SIGUSR2 would otherwise kill the process without draining: it drains like SIGTERM.)
 * SIGHUP reloads the credentials (start.command.ts), SIGUSR1 is ignored (signals.ts); every other
 * signal keeps its default.
 * Listens from construction, so a signal during startup drains as soon as startup is done.
 */
export class Drain {
  private signal: NodeJS.Signals | undefined;
  private requestDrain!: (signal: NodeJS.Signals) => void;
  private readonly requested: Promise<NodeJS.Signals>;
  private readonly pending = new Set<DrainStep>();

  constructor(private readonly timeoutMs: number, private readonly out: DrainLog) {
    let request!: (signal: NodeJS.Signals) => void;
    this.requested = new Promise((resolve) => (request = resolve));
    this.requestDrain = (signal) => {
      this.signal ??= signal;
      request(signal);
    };
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.signal) {
        this.out.error({ event: 'DrainAborted', signal, inFlight: this.describePending() }, `effectd: second ${signal} while draining: exiting now with code 1; still in flight: ${this.describePending()}`);
        process.exit(1);
      }
      this.signal = signal;
      request(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    process.on('SIGUSR2', onSignal);
  }

  /** Starts the drain as a signal would (e.g. asked by the primary of `start --workers`); once draining, asking again changes nothing. */
  request(signal: NodeJS.Signals): void {
    this.requestDrain(signal);
  }

  /**
   * Serves until a stop signal, then closes the steps of each phase together and the phases in
   * order (ingresses first, the runtime and its ledger last). Resolves with the exit code: 0 when
   * everything closed, 1 when a step failed; exits with 1 itself when the time runs out.
   */
  async serveUntilDrained(phases: DrainStep[][]): Promise<number> {
    const signal = await this.requested;
    const started = Date.now();
    this.out.info({ event: 'Draining', signal, timeoutMs: this.timeoutMs }, `effectd: ${signal}: draining (no new commands; finishing those in flight; up to ${this.timeoutMs} ms; ${signal} again stops at once)`);
    const timer = setTimeout(() => {
      this.out.error({ event: 'DrainTimedOut', timeoutMs: this.timeoutMs, inFlight: this.describePending() }, `effectd: drain timed out after ${this.timeoutMs} ms (EFFECTD_DRAIN_TIMEOUT_MS): exiting with code 1; still in flight: ${this.describePending()}`);
      process.exit(1);
    }, this.timeoutMs);
    const failures = await this.closeAll(phases);
    clearTimeout(timer);
    if (failures.length > 0) {
      this.out.error({ event: 'Drained', ms: Date.now() - started, failures }, `effectd: drain finished in ${Date.now() - started} ms with failures, exiting with code 1: ${failures.join('; ')}`);
      return 1;
    }
    this.out.info({ event: 'Drained', ms: Date.now() - started }, `effectd: drained in ${Date.now() - started} ms; exiting`);
    return 0;
  }

  /** A failing step does not stop the later phases, so the ledger is still flushed. */
  private async closeAll(phases: DrainStep[][]): Promise<string[]> {
    const failures: string[] = [];
    for (const phase of phases) {
      await Promise.all(phase.map(async (step) => {
        this.pending.add(step);
        try {
          await step.close();
        } catch (error) {
          failures.push(`${step.name}: ${(error as Error).message}`);
        }
        this.pending.delete(step);
      }));
    }
    return failures;
  }

  private describePending(): string {
    if (this.pending.size === 0) return 'nothing';
    return [...this.pending].map((step) => {
      const detail = step.inFlight?.();
      return detail ? `${step.name} (${detail})` : step.name;
    }).join(', ');
  }
}
