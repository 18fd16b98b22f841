import { doublingDelayMs } from '../../core/backoff.js';

/** Capped exponential backoff with jitter: 50 ms, 100 ms, … up to `capMs`. */
export function backoffMs(attempt: number, baseMs = 50, capMs = 5_000): number {
  const ceiling = doublingDelayMs(attempt, baseMs, capMs);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Sleeps up to `ms`, ending early once `active()` turns false (partition revoked, server closing). */
export async function pauseWhile(ms: number, active: () => boolean, stepMs = 250): Promise<void> {
  const until = Date.now() + ms;
  while (active() && Date.now() < until) await sleep(Math.min(stepMs, until - Date.now()));
}
