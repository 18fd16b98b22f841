import { simulatorCall } from '@effectd/simulators';
import type { CellProviders } from '../cell-providers.js';

/**
 * LIMBO's times are a provider's (a commit 90 s late, a search 120–180 s behind): they run on the
 * simulators' own clock (SimClock, advanced through POST /_admin/clock), never on effectd's. While a
 * cell runs, this driver makes every provider's clock run `scale` times as fast as real time, which
 * is the benchmark's compression of the tools' contracts (a 400 ms timeout ≈ 40 s, a 1 s settle
 * window ≈ 100 s at the default 100×). When the agent is done, `jump` moves the providers' clocks on
 * at once: what commits hours late (the tail of a heavy-tailed late commit) commits then, before
 * the world is read.
 */
export const SIM_SCALE = 100;

export class SimTimeDriver {
  private timer: NodeJS.Timeout | undefined;
  private last = performance.now();
  private ticking: Promise<unknown> = Promise.resolve();
  private advanced = 0;

  private constructor(private readonly providers: CellProviders, private readonly scale: number) {}

  static start(providers: CellProviders, scale = SIM_SCALE, tickMs = 20): SimTimeDriver {
    const driver = new SimTimeDriver(providers, scale);
    driver.timer = setInterval(() => {
      const now = performance.now();
      const extra = (now - driver.last) * (driver.scale - 1);
      driver.last = now;
      // One tick at a time: a tick that is still on its way is not overtaken by the next.
      driver.ticking = driver.ticking.then(() => driver.advance(extra)).catch(() => undefined);
    }, tickMs);
    return driver;
  }

  /** Simulated ms the driver added on top of real time so far (ticks and jumps). */
  get advancedMs(): number {
    return this.advanced;
  }

  /** Moves every provider's clock on by `ms` of simulated time at once. */
  async jump(ms: number): Promise<void> {
    await this.ticking;
    await this.advance(ms);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  private async advance(ms: number): Promise<void> {
    if (ms <= 0) return;
    const whole = Math.floor(ms);
    this.advanced += whole;
    await Promise.all(this.providers.kinds.map((kind) => simulatorCall(this.providers.url(kind), '/_admin/clock', { advanceMs: whole })));
  }
}

/** A delay drawn log-uniformly between two bounds (ms): as likely between 40 s and 80 s as between 1 h and 2 h. */
export function logUniformMs(unit: number, minMs: number, maxMs: number): number {
  return Math.round(Math.exp(Math.log(minMs) + unit * (Math.log(maxMs) - Math.log(minMs))));
}
