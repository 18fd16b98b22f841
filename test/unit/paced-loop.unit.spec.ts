import { afterEach, describe, expect, it, vi } from 'vitest';
import { PacedLoop } from '../../src/shared/paced-loop.js';

describe('PacedLoop: a background pass that slows while it finds no work', () => {
  afterEach(() => vi.useRealTimers());

  /** Times (fake ms) at which passes ran, for `ms` of fake time, the pass answering busy per call. */
  async function passTimes(busy: (call: number) => boolean, ms: number, during?: (loop: PacedLoop) => Promise<void>): Promise<number[]> {
    vi.useFakeTimers({ now: 0 });
    const times: number[] = [];
    const loop = new PacedLoop(async () => busy(times.push(Date.now()) - 1), { everyMs: 200, idleMs: 1_000 }, () => {});
    loop.start();
    await (during ? during(loop) : vi.advanceTimersByTimeAsync(ms));
    await loop.stop();
    return times;
  }

  it('runs every everyMs while busy', async () => {
    expect(await passTimes(() => true, 1_000)).toEqual([0, 200, 400, 600, 800, 1_000]);
  });

  it('doubles the wait while idle, up to idleMs', async () => {
    expect(await passTimes(() => false, 4_000)).toEqual([0, 400, 1_200, 2_200, 3_200]);
  });

  it('comes back to everyMs on wake (its next pass everyMs later, not at once)', async () => {
    const times = await passTimes((call) => call >= 4, 0, async (loop) => {
      await vi.advanceTimersByTimeAsync(2_500); // passes at 0, 400, 1200, 2200; the next is due at 3200
      loop.wake();
      await vi.advanceTimersByTimeAsync(450);
    });
    expect(times).toEqual([0, 400, 1_200, 2_200, 2_700, 2_900]);
  });

  it('runs no pass after stop', async () => {
    vi.useFakeTimers({ now: 0 });
    let passes = 0;
    const loop = new PacedLoop(async () => (passes++, true), { everyMs: 200, idleMs: 1_000 }, () => {});
    loop.start();
    await vi.advanceTimersByTimeAsync(250);
    await loop.stop();
    loop.wake();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(passes).toBe(2);
  });
});
