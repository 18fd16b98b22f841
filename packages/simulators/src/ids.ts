/**
 * Deterministic ids: a counter per prefix, stamped with the simulator's seed, so two runs that make
 * the same requests in the same order see the same ids.
 */
export class IdSource {
  private readonly counters = new Map<string, number>();
  readonly seedHex: string;

  constructor(seed = 0) {
    this.seedHex = (seed >>> 0).toString(16);
  }

  reset(): void {
    this.counters.clear();
  }

  private bump(prefix: string): number {
    const n = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, n);
    return n;
  }

  /** Stripe-like: `ch_<seedhex>_000001`. */
  next(prefix: string): string {
    return `${prefix}_${this.seedHex}_${String(this.bump(prefix)).padStart(6, '0')}`;
  }

  /** EC2-like: `i-` and 17 hex digits (8 of seed, 9 of counter). */
  nextHex17(prefix: string): string {
    const n = this.bump(prefix);
    return `${prefix}-${this.seedHex.padStart(8, '0')}${n.toString(16).padStart(9, '0')}`;
  }
}
