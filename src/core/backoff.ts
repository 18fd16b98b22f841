/** The n-th delay (0-based) of a backoff that doubles from `firstMs` and stops growing at `maxMs`. */
export function doublingDelayMs(n: number, firstMs: number, maxMs: number): number {
  return Math.min(maxMs, firstMs * 2 ** Math.min(n, 30));
}
